<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>LayerPlan</name>
    <message>
        <source>%1: a pruning ratio must be between 0 and %2 %</source>
        <translation>%1: a pruning ratio must be between 0 and %2 %</translation>
    </message>
    <message>
        <source>%1: %2 takes no quantization method</source>
        <translation>%1: %2 takes no quantization method</translation>
    </message>
    <message>
        <source>%1: %2 needs a method (RTN, AWQ or GPTQ)</source>
        <translation>%1: %2 needs a method (RTN, AWQ or GPTQ)</translation>
    </message>
    <message>
        <source>%1: the group size must be positive</source>
        <translation>%1: the group size must be positive</translation>
    </message>
    <message>
        <source>%1: group size %2 is larger than a row (%3 elements)</source>
        <translation>%1: group size %2 is larger than a row (%3 elements)</translation>
    </message>
    <message>
        <source>%1: the output head shares the token embedding; only RTN can quantize it</source>
        <translation>%1: the output head shares the token embedding; only RTN can quantize it</translation>
    </message>
    <message>
        <source>Could not open the plan %1: %2</source>
        <translation>Could not open the plan %1: %2</translation>
    </message>
    <message>
        <source>the plan does not match the model&apos;s layers</source>
        <translation>the plan does not match the model&apos;s layers</translation>
    </message>
    <message>
        <source>%1 uses flat groups, which the Layers page cannot edit</source>
        <translation>%1 uses flat groups, which the Layers page cannot edit</translation>
    </message>
    <message>
        <source>pruning names the unknown layer %1</source>
        <translation>pruning names the unknown layer %1</translation>
    </message>
</context>
<context>
    <name>edge::studio::MainWindow</name>
    <message>
        <source>Loading %1…</source>
        <translation>Loading %1…</translation>
    </message>
    <message>
        <source>Loaded %1</source>
        <translation>Loaded %1</translation>
    </message>
    <message>
        <source>Loading cancelled</source>
        <translation>Loading cancelled</translation>
    </message>
    <message>
        <source>About EdgeStudio</source>
        <translation>About EdgeStudio</translation>
    </message>
    <message>
        <source>&lt;b&gt;EdgeStudio %1&lt;/b&gt;&lt;p&gt;Deploy neural networks on low-resource boards: inspect, quantize, prune, compile and measure.&lt;/p&gt;</source>
        <translation>&lt;b&gt;EdgeStudio %1&lt;/b&gt;&lt;p&gt;Deploy neural networks on low-resource boards: inspect, quantize, prune, compile and measure.&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Clear list</source>
        <translation>Clear list</translation>
    </message>
    <message>
        <source>Could not open the model</source>
        <translation>Could not open the model</translation>
    </message>
    <message>
        <source>Open model</source>
        <translation>Open model</translation>
    </message>
    <message>
        <source>No model</source>
        <translation>No model</translation>
    </message>
    <message>
        <source>%1  ·  %2 parameters  ·  %3  ·  %4 layers</source>
        <translation>%1  ·  %2 parameters  ·  %3  ·  %4 layers</translation>
    </message>
    <message>
        <source>EdgeStudio</source>
        <translation>EdgeStudio</translation>
    </message>
    <message>
        <source>Home</source>
        <translation>Home</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Model</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>&amp;File</translation>
    </message>
    <message>
        <source>&amp;Open model…</source>
        <translation>&amp;Open model…</translation>
    </message>
    <message>
        <source>Open &amp;folder…</source>
        <translation>Open &amp;folder…</translation>
    </message>
    <message>
        <source>Open &amp;recent</source>
        <translation>Open &amp;recent</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Quit</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;View</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>&amp;Language</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Help</translation>
    </message>
    <message>
        <source>&amp;About EdgeStudio</source>
        <translation>&amp;About EdgeStudio</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>Layers</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>&amp;Edit</translation>
    </message>
</context>
<context>
    <name>edge::views::HomePage</name>
    <message>
        <source>EdgeStudio</source>
        <translation>EdgeStudio</translation>
    </message>
    <message>
        <source>Fit neural networks onto small boards: inspect a model, choose per-layer precision and pruning, compile, deploy to a Jetson and measure.</source>
        <translation>Fit neural networks onto small boards: inspect a model, choose per-layer precision and pruning, compile, deploy to a Jetson and measure.</translation>
    </message>
    <message>
        <source>Open model…</source>
        <translation>Open model…</translation>
    </message>
    <message>
        <source>Open Hugging Face folder…</source>
        <translation>Open Hugging Face folder…</translation>
    </message>
    <message>
        <source>Recent models</source>
        <translation>Recent models</translation>
    </message>
    <message>
        <source>Models you open appear here. Double-click one to open it again.</source>
        <translation>Models you open appear here. Double-click one to open it again.</translation>
    </message>
    <message>
        <source>Double-click to open</source>
        <translation>Double-click to open</translation>
    </message>
    <message>
        <source>Formats</source>
        <translation>Formats</translation>
    </message>
    <message>
        <source>&lt;p&gt;&lt;b&gt;GGUF&lt;/b&gt; (.gguf): weights, config and tokenizer in one file.&lt;/p&gt;&lt;p&gt;&lt;b&gt;llama2.c&lt;/b&gt; (.bin) with its tokenizer (.bin).&lt;/p&gt;&lt;p&gt;&lt;b&gt;Hugging Face folder&lt;/b&gt;: *.safetensors, config.json, tokenizer.json.&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;GGUF&lt;/b&gt; (.gguf): weights, config and tokenizer in one file.&lt;/p&gt;&lt;p&gt;&lt;b&gt;llama2.c&lt;/b&gt; (.bin) with its tokenizer (.bin).&lt;/p&gt;&lt;p&gt;&lt;b&gt;Hugging Face folder&lt;/b&gt;: *.safetensors, config.json, tokenizer.json.&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Workflow</source>
        <translation>Workflow</translation>
    </message>
    <message>
        <source>&lt;ol style=&quot;margin-left:-20px&quot;&gt;&lt;li&gt;Model: architecture, layers, sizes&lt;/li&gt;&lt;li&gt;Sensitivity and per-layer plan&lt;/li&gt;&lt;li&gt;Quantize, prune, calibrate, validate&lt;/li&gt;&lt;li&gt;Compile and deploy to the board&lt;/li&gt;&lt;li&gt;Compare configurations&lt;/li&gt;&lt;/ol&gt;</source>
        <translation>&lt;ol style=&quot;margin-left:-20px&quot;&gt;&lt;li&gt;Model: architecture, layers, sizes&lt;/li&gt;&lt;li&gt;Sensitivity and per-layer plan&lt;/li&gt;&lt;li&gt;Quantize, prune, calibrate, validate&lt;/li&gt;&lt;li&gt;Compile and deploy to the board&lt;/li&gt;&lt;li&gt;Compare configurations&lt;/li&gt;&lt;/ol&gt;</translation>
    </message>
    <message>
        <source>No model loaded yet. Open one to see its architecture, layers and sizes.</source>
        <translation>No model loaded yet. Open one to see its architecture, layers and sizes.</translation>
    </message>
    <message>
        <source>%1
%2 parameters  ·  %3 weights  ·  %4 layers in %5 blocks  ·  %6</source>
        <translation>%1
%2 parameters  ·  %3 weights  ·  %4 layers in %5 blocks  ·  %6</translation>
    </message>
    <message>
        <source>Current model</source>
        <translation>Current model</translation>
    </message>
    <message>
        <source>Show model page</source>
        <translation>Show model page</translation>
    </message>
</context>
<context>
    <name>edge::views::JobSlot</name>
    <message>
        <source>The engine did not give a reason.</source>
        <translation>The engine did not give a reason.</translation>
    </message>
</context>
<context>
    <name>edge::views::LayerChart</name>
    <message>
        <source>Click a bar to select its layer</source>
        <translation>Click a bar to select its layer</translation>
    </message>
    <message>
        <source>%1  ·  %2 parameters  ·  %3</source>
        <translation>%1  ·  %2 parameters  ·  %3</translation>
    </message>
    <message>
        <source>Size per layer</source>
        <translation>Size per layer</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>Parameters</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>Bytes</translation>
    </message>
    <message>
        <source>What the bars measure</source>
        <translation>What the bars measure</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>Attention</translation>
    </message>
    <message>
        <source>Feed-forward</source>
        <translation>Feed-forward</translation>
    </message>
    <message>
        <source>Embedding / output</source>
        <translation>Embedding / output</translation>
    </message>
    <message>
        <source>Decoder block (bars in execution order)</source>
        <translation>Decoder block (bars in execution order)</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
</context>
<context>
    <name>edge::views::LayerPlanModel</name>
    <message>
        <source>No model is loaded</source>
        <translation>No model is loaded</translation>
    </message>
    <message>
        <source>Row %1 is not a layer</source>
        <translation>Row %1 is not a layer</translation>
    </message>
    <message numerus="yes">
        <source>Edit %n layer(s)</source>
        <translation><numerusform>Edit %n layer</numerusform><numerusform>Edit %n layers</numerusform></translation>
    </message>
    <message>
        <source>Could not save the plan %1: %2</source>
        <translation>Could not save the plan %1: %2</translation>
    </message>
    <message>
        <source>Open plan %1</source>
        <translation>Open plan %1</translation>
    </message>
    <message>
        <source>channel</source>
        <translation>channel</translation>
    </message>
    <message>
        <source>sym</source>
        <translation>sym</translation>
    </message>
    <message>
        <source>asym</source>
        <translation>asym</translation>
    </message>
    <message>
        <source>%1 bytes (FP32: %2 bytes)</source>
        <translation>%1 bytes (FP32: %2 bytes)</translation>
    </message>
    <message>
        <source>%1: unknown precision &quot;%2&quot;</source>
        <translation>%1: unknown precision &quot;%2&quot;</translation>
    </message>
    <message>
        <source>%1: unknown method &quot;%2&quot;</source>
        <translation>%1: unknown method &quot;%2&quot;</translation>
    </message>
    <message>
        <source>%1: the group size must be a positive number</source>
        <translation>%1: the group size must be a positive number</translation>
    </message>
    <message>
        <source>%1: symmetric must be true or false</source>
        <translation>%1: symmetric must be true or false</translation>
    </message>
    <message>
        <source>%1: the pruning ratio must be a number</source>
        <translation>%1: the pruning ratio must be a number</translation>
    </message>
    <message>
        <source>This column cannot be edited</source>
        <translation>This column cannot be edited</translation>
    </message>
    <message>
        <source>%1: %2 takes no method, group size or symmetry</source>
        <translation>%1: %2 takes no method, group size or symmetry</translation>
    </message>
    <message>
        <source>Set %1 of %2</source>
        <translation>Set %1 of %2</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>Layer</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>Kind</translation>
    </message>
    <message>
        <source>Shape</source>
        <translation>Shape</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>Parameters</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>Precision</translation>
    </message>
    <message>
        <source>Method</source>
        <translation>Method</translation>
    </message>
    <message>
        <source>Group</source>
        <translation>Group</translation>
    </message>
    <message>
        <source>Symmetry</source>
        <translation>Symmetry</translation>
    </message>
    <message>
        <source>Pruning</source>
        <translation>Pruning</translation>
    </message>
    <message>
        <source>Est. size</source>
        <translation>Est. size</translation>
    </message>
</context>
<context>
    <name>edge::views::LayerTreeModel</name>
    <message>
        <source>Block %1</source>
        <translation>Block %1</translation>
    </message>
    <message>
        <source>decoder block</source>
        <translation>decoder block</translation>
    </message>
    <message numerus="yes">
        <source>%n layer(s)</source>
        <translation>
            <numerusform>%n layer</numerusform>
            <numerusform>%n layers</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 (from %2)</source>
        <translation>%1 (from %2)</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>Kind</translation>
    </message>
    <message>
        <source>Shape</source>
        <translation>Shape</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>Parameters</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>Bytes</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>Type</translation>
    </message>
</context>
<context>
    <name>edge::views::LayersPage</name>
    <message numerus="yes">
        <source>Set %n layer(s) to %1</source>
        <translation><numerusform>Set %n layer to %1</numerusform><numerusform>Set %n layers to %1</numerusform></translation>
    </message>
    <message>
        <source>Open plan</source>
        <translation>Open plan</translation>
    </message>
    <message>
        <source>Quantization plans (*.plan.json *.json)</source>
        <translation>Quantization plans (*.plan.json *.json)</translation>
    </message>
    <message>
        <source>Save plan</source>
        <translation>Save plan</translation>
    </message>
    <message>
        <source>Quantization plans (*.plan.json)</source>
        <translation>Quantization plans (*.plan.json)</translation>
    </message>
    <message>
        <source>All kinds</source>
        <translation>All kinds</translation>
    </message>
    <message>
        <source>All blocks</source>
        <translation>All blocks</translation>
    </message>
    <message>
        <source>Outside blocks</source>
        <translation>Outside blocks</translation>
    </message>
    <message>
        <source>Block %1</source>
        <translation>Block %1</translation>
    </message>
    <message numerus="yes">
        <source>%n selected layer(s):</source>
        <translation><numerusform>%n selected layer:</numerusform><numerusform>%n selected layers:</numerusform></translation>
    </message>
    <message>
        <source>Select layers to edit them together:</source>
        <translation>Select layers to edit them together:</translation>
    </message>
    <message>
        <source>%1 of %2 (%3 %)</source>
        <translation>%1 of %2 (%3 %)</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1 bytes</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>Layers</translation>
    </message>
    <message>
        <source>Choose the precision, method and group size of each layer: double-click a cell, or select several rows and set them together.</source>
        <translation>Choose the precision, method and group size of each layer: double-click a cell, or select several rows and set them together.</translation>
    </message>
    <message>
        <source>Open a model to plan how each of its layers is quantized.</source>
        <translation>Open a model to plan how each of its layers is quantized.</translation>
    </message>
    <message>
        <source>Filter by layer or kind…</source>
        <translation>Filter by layer or kind…</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>Undo</translation>
    </message>
    <message>
        <source>Redo</source>
        <translation>Redo</translation>
    </message>
    <message>
        <source>Open plan…</source>
        <translation>Open plan…</translation>
    </message>
    <message>
        <source>Save plan…</source>
        <translation>Save plan…</translation>
    </message>
    <message>
        <source>channel</source>
        <translation>channel</translation>
    </message>
    <message>
        <source>Apply to selected</source>
        <translation>Apply to selected</translation>
    </message>
    <message>
        <source>Estimated size:</source>
        <translation>Estimated size:</translation>
    </message>
    <message>
        <source>Average bits per weight:</source>
        <translation>Average bits per weight:</translation>
    </message>
</context>
<context>
    <name>edge::views::ModelDocument</name>
    <message>
        <source>Could not open “%1”.</source>
        <translation>Could not open “%1”.</translation>
    </message>
</context>
<context>
    <name>edge::views::ModelPage</name>
    <message>
        <source>Model</source>
        <translation>Model</translation>
    </message>
    <message>
        <source>Nothing loaded yet</source>
        <translation>Nothing loaded yet</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>Loading %1…</translation>
    </message>
    <message>
        <source>Loading %1: %2</source>
        <translation>Loading %1: %2</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>No model loaded</translation>
    </message>
    <message>
        <source>Open a GGUF file, a llama2.c checkpoint (.bin) or a Hugging Face folder (safetensors + config.json + tokenizer.json) to see its architecture and layers.</source>
        <translation>Open a GGUF file, a llama2.c checkpoint (.bin) or a Hugging Face folder (safetensors + config.json + tokenizer.json) to see its architecture and layers.</translation>
    </message>
    <message>
        <source>Open model…</source>
        <translation>Open model…</translation>
    </message>
    <message>
        <source>Open folder…</source>
        <translation>Open folder…</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>Layers</translation>
    </message>
    <message>
        <source>%1  ·  %2 format  ·  %3</source>
        <translation>%1  ·  %2 format  ·  %3</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>Summary</translation>
    </message>
</context>
<context>
    <name>edge::views::OpenModel</name>
    <message>
        <source>Choose the tokenizer for %1</source>
        <translation>Choose the tokenizer for %1</translation>
    </message>
    <message>
        <source>llama2.c tokenizer (*.bin);;All files (*)</source>
        <translation>llama2.c tokenizer (*.bin);;All files (*)</translation>
    </message>
    <message>
        <source>Models (*.gguf *.bin *.safetensors *.onnx *.pt)</source>
        <translation>Models (*.gguf *.bin *.safetensors *.onnx *.pt)</translation>
    </message>
    <message>
        <source>GGUF (*.gguf)</source>
        <translation>GGUF (*.gguf)</translation>
    </message>
    <message>
        <source>llama2.c checkpoint (*.bin)</source>
        <translation>llama2.c checkpoint (*.bin)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>All files (*)</translation>
    </message>
    <message>
        <source>Open model</source>
        <translation>Open model</translation>
    </message>
    <message>
        <source>Open a Hugging Face model folder (safetensors + config.json + tokenizer.json)</source>
        <translation>Open a Hugging Face model folder (safetensors + config.json + tokenizer.json)</translation>
    </message>
</context>
<context>
    <name>edge::views::SummaryModel</name>
    <message>
        <source>yes</source>
        <translation>yes</translation>
    </message>
    <message>
        <source>no</source>
        <translation>no</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Model</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>File</source>
        <translation>File</translation>
    </message>
    <message>
        <source>Source format</source>
        <translation>Source format</translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation>Architecture</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>Parameters</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>Weight memory</source>
        <translation>Weight memory</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>Layers</translation>
    </message>
    <message>
        <source>Tensors</source>
        <translation>Tensors</translation>
    </message>
    <message>
        <source>Embedding width</source>
        <translation>Embedding width</translation>
    </message>
    <message>
        <source>FFN width</source>
        <translation>FFN width</translation>
    </message>
    <message>
        <source>Decoder blocks</source>
        <translation>Decoder blocks</translation>
    </message>
    <message>
        <source>Attention heads</source>
        <translation>Attention heads</translation>
    </message>
    <message>
        <source>KV heads</source>
        <translation>KV heads</translation>
    </message>
    <message>
        <source>Head dimension</source>
        <translation>Head dimension</translation>
    </message>
    <message>
        <source>Vocabulary</source>
        <translation>Vocabulary</translation>
    </message>
    <message>
        <source>Context length</source>
        <translation>Context length</translation>
    </message>
    <message>
        <source>RoPE dimensions</source>
        <translation>RoPE dimensions</translation>
    </message>
    <message>
        <source>RoPE θ</source>
        <translation>RoPE θ</translation>
    </message>
    <message>
        <source>Norm ε</source>
        <translation>Norm ε</translation>
    </message>
    <message>
        <source>Tied embeddings</source>
        <translation>Tied embeddings</translation>
    </message>
    <message>
        <source>Tokenizer</source>
        <translation>Tokenizer</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>Type</translation>
    </message>
    <message>
        <source>none (the file carries no tokenizer)</source>
        <translation>none (the file carries no tokenizer)</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>Tokens</translation>
    </message>
    <message>
        <source>Merges</source>
        <translation>Merges</translation>
    </message>
    <message>
        <source>BOS / EOS</source>
        <translation>BOS / EOS</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>Source</translation>
    </message>
    <message>
        <source>File metadata</source>
        <translation>File metadata</translation>
    </message>
    <message>
        <source>%1 more entries</source>
        <translation>%1 more entries</translation>
    </message>
    <message>
        <source>Property</source>
        <translation>Property</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>Value</translation>
    </message>
</context>
</TS>
