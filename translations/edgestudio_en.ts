<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>Autoplan</name>
    <message>
        <source>Autoplan: no model is open</source>
        <translation>Autoplan: no model is open</translation>
    </message>
    <message>
        <source>Autoplan needs each layer&apos;s sensitivity: run the Sensitivity page first</source>
        <translation>Autoplan needs each layer&apos;s sensitivity: run the Sensitivity page first</translation>
    </message>
    <message>
        <source>Each layer&apos;s error at FP16, INT8 and INT4</source>
        <translation>Each layer&apos;s error at FP16, INT8 and INT4</translation>
    </message>
    <message>
        <source>Autoplan cancelled</source>
        <translation>Autoplan cancelled</translation>
    </message>
    <message>
        <source>Choosing precisions within the budget</source>
        <translation>Choosing precisions within the budget</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>Done</translation>
    </message>
</context>
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
    <message>
        <source>%1: only attention and MLP layers are pruned (whole heads or channels)</source>
        <translation>%1: only attention and MLP layers are pruned (whole heads or channels)</translation>
    </message>
</context>
<context>
    <name>Project</name>
    <message>
        <source>%1: not a project file (%2 at byte %3)</source>
        <translation>%1: not a project file (%2 at byte %3)</translation>
    </message>
    <message>
        <source>%1: not a project file (no &quot;format&quot;: &quot;edgeproj&quot;)</source>
        <translation>%1: not a project file (no &quot;format&quot;: &quot;edgeproj&quot;)</translation>
    </message>
    <message>
        <source>%1: project version %2 is not supported</source>
        <translation>%1: project version %2 is not supported</translation>
    </message>
    <message>
        <source>%1: the project names no model</source>
        <translation>%1: the project names no model</translation>
    </message>
    <message>
        <source>%1: cannot write (%2)</source>
        <translation>%1: cannot write (%2)</translation>
    </message>
    <message>
        <source>%1: cannot read (%2)</source>
        <translation>%1: cannot read (%2)</translation>
    </message>
</context>
<context>
    <name>PruningModel</name>
    <message>
        <source>KV heads</source>
        <translation>KV heads</translation>
    </message>
    <message>
        <source>MLP channels</source>
        <translation>MLP channels</translation>
    </message>
    <message>
        <source>conv channels</source>
        <translation>conv channels</translation>
    </message>
</context>
<context>
    <name>Validation</name>
    <message>
        <source>Validation: no model is open</source>
        <translation>Validation: no model is open</translation>
    </message>
    <message>
        <source>Validation: the plan does not match the open model</source>
        <translation>Validation: the plan does not match the open model</translation>
    </message>
    <message>
        <source>Validation: every layer is FP32 — set a precision on the Layers page first</source>
        <translation>Validation: every layer is FP32 — set a precision on the Layers page first</translation>
    </message>
    <message>
        <source>Validation: cannot read the evaluation text %1</source>
        <translation>Validation: cannot read the evaluation text %1</translation>
    </message>
    <message>
        <source>Validation: the evaluation text %1 is empty</source>
        <translation>Validation: the evaluation text %1 is empty</translation>
    </message>
    <message>
        <source>Validation cancelled</source>
        <translation>Validation cancelled</translation>
    </message>
    <message>
        <source>mean KL %1 ≥ %2</source>
        <translation>mean KL %1 ≥ %2</translation>
    </message>
    <message>
        <source>%1: %2 NaN and %3 Inf activations</source>
        <translation>%1: %2 NaN and %3 Inf activations</translation>
    </message>
    <message>
        <source>bit flips drop top-1 confidence by %1 %</source>
        <translation>bit flips drop top-1 confidence by %1 %</translation>
    </message>
    <message>
        <source>decode jitter p99−p50 %1 ms ≥ %2 ms</source>
        <translation>decode jitter p99−p50 %1 ms ≥ %2 ms</translation>
    </message>
    <message>
        <source>Calibration: cannot read the calibration text %1</source>
        <translation>Calibration: cannot read the calibration text %1</translation>
    </message>
    <message>
        <source>Compile: no model is open</source>
        <translation>Compile: no model is open</translation>
    </message>
    <message>
        <source>Compile: the plan does not match the open model</source>
        <translation>Compile: the plan does not match the open model</translation>
    </message>
    <message>
        <source>Compile: cannot read the evaluation text %1</source>
        <translation>Compile: cannot read the evaluation text %1</translation>
    </message>
    <message>
        <source>Compile cancelled</source>
        <translation>Compile cancelled</translation>
    </message>
    <message>
        <source>the plan&apos;s pruning</source>
        <translation>the plan&apos;s pruning</translation>
    </message>
    <message>
        <source>Calibration: %1</source>
        <translation>Calibration: %1</translation>
    </message>
    <message>
        <source>Calibration cancelled</source>
        <translation>Calibration cancelled</translation>
    </message>
    <message>
        <source>; %1 chose %2 of %3 paragraphs (seed %4)</source>
        <translation>; %1 chose %2 of %3 paragraphs (seed %4)</translation>
    </message>
    <message>
        <source>k-means</source>
        <translation>k-means</translation>
    </message>
    <message>
        <source>a random draw</source>
        <translation>a random draw</translation>
    </message>
</context>
<context>
    <name>edge::studio::BoardAutoplan</name>
    <message>
        <source>Open a model first.</source>
        <translation>Open a model first.</translation>
    </message>
    <message>
        <source>%1 has no cost model yet: deploy to it with &quot;Measure cost model&quot; ticked on the Boards page.</source>
        <translation>%1 has no cost model yet: deploy to it with &quot;Measure cost model&quot; ticked on the Boards page.</translation>
    </message>
    <message>
        <source>Autoplan needs each layer&apos;s sensitivity: run the Sensitivity page first.</source>
        <translation>Autoplan needs each layer&apos;s sensitivity: run the Sensitivity page first.</translation>
    </message>
    <message>
        <source>predicted %1 ms per token on %2: %3 INT4, %4 INT8, %5 FP16 layers, %6 bits per weight</source>
        <translation>predicted %1 ms per token on %2: %3 INT4, %4 INT8, %5 FP16 layers, %6 bits per weight</translation>
    </message>
    <message>
        <source>Autoplan for %1</source>
        <translation>Autoplan for %1</translation>
    </message>
    <message>
        <source>Autoplan for a board</source>
        <translation>Autoplan for a board</translation>
    </message>
    <message>
        <source>No board has a cost model yet. On the Boards page, tick &quot;Measure cost model&quot; and deploy: the agent times the board on the engine it receives.</source>
        <translation>No board has a cost model yet. On the Boards page, tick &quot;Measure cost model&quot; and deploy: the agent times the board on the engine it receives.</translation>
    </message>
    <message>
        <source> ms</source>
        <translation> ms</translation>
    </message>
    <message>
        <source>%1 ran its engine (%2) at %3 ms per token; %4 of it outside the layers&apos; products.</source>
        <translation>%1 ran its engine (%2) at %3 ms per token; %4 of it outside the layers&apos; products.</translation>
    </message>
    <message>
        <source>Board</source>
        <translation>Board</translation>
    </message>
    <message>
        <source>Time per token at most</source>
        <translation>Time per token at most</translation>
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
    <message>
        <source>Configuration %1 added to the Pareto page</source>
        <translation>Configuration %1 added to the Pareto page</translation>
    </message>
    <message>
        <source>Open project</source>
        <translation>Open project</translation>
    </message>
    <message>
        <source>Save project</source>
        <translation>Save project</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>Saved %1</translation>
    </message>
    <message>
        <source>EdgeStudio projects (*.edgeproj)</source>
        <translation>EdgeStudio projects (*.edgeproj)</translation>
    </message>
    <message>
        <source>Recover session</source>
        <translation>Recover session</translation>
    </message>
    <message>
        <source>EdgeStudio did not exit cleanly last time. Recover the autosaved project (model, plan and results)?</source>
        <translation>EdgeStudio did not exit cleanly last time. Recover the autosaved project (model, plan and results)?</translation>
    </message>
    <message>
        <source>Plan of %1 opened in the Layers page</source>
        <translation>Plan of %1 opened in the Layers page</translation>
    </message>
    <message>
        <source>Sensitivity</source>
        <translation>Sensitivity</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>Validation</translation>
    </message>
    <message>
        <source>Pareto</source>
        <translation>Pareto</translation>
    </message>
    <message>
        <source>Open &amp;project…</source>
        <translation>Open &amp;project…</translation>
    </message>
    <message>
        <source>&amp;Save project</source>
        <translation>&amp;Save project</translation>
    </message>
    <message>
        <source>Save project &amp;as…</source>
        <translation>Save project &amp;as…</translation>
    </message>
    <message>
        <source>Boards</source>
        <translation>Boards</translation>
    </message>
    <message>
        <source>Pruning</source>
        <translation>Pruning</translation>
    </message>
    <message>
        <source>%1 compiled: %2 (the Boards page deploys it)</source>
        <translation>%1 compiled: %2 (the Boards page deploys it)</translation>
    </message>
    <message>
        <source>The engine profiled on %1 was not compiled from a configuration of this project</source>
        <translation>The engine profiled on %1 was not compiled from a configuration of this project</translation>
    </message>
    <message>
        <source>%1 measured on %2: %3 ms per token (p50); shown on the Pareto page</source>
        <translation>%1 measured on %2: %3 ms per token (p50); shown on the Pareto page</translation>
    </message>
    <message>
        <source>The project</source>
        <translation>The project</translation>
    </message>
    <message>
        <source>The project %1</source>
        <translation>The project %1</translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation>Unsaved changes</translation>
    </message>
    <message>
        <source>%1 has changes that are not saved. Save them before closing?</source>
        <translation>%1 has changes that are not saved. Save them before closing?</translation>
    </message>
    <message>
        <source>Discarding also removes the autosaved copy.</source>
        <translation>Discarding also removes the autosaved copy.</translation>
    </message>
    <message>
        <source>Untitled</source>
        <translation>Untitled</translation>
    </message>
    <message>
        <source>%1[*] — EdgeStudio</source>
        <translation>%1[*] — EdgeStudio</translation>
    </message>
    <message numerus="yes">
        <source>The plan now prunes %n group(s)</source>
        <translation>
            <numerusform>The plan now prunes %n group</numerusform>
            <numerusform>The plan now prunes %n groups</numerusform>
        </translation>
    </message>
    <message>
        <source>Autoplan for a board</source>
        <translation>Autoplan for a board</translation>
    </message>
    <message>
        <source>Autoplan: %1. Validate it to add the configuration.</source>
        <translation>Autoplan: %1. Validate it to add the configuration.</translation>
    </message>
</context>
<context>
    <name>edge::views::BoardController</name>
    <message>
        <source>Deploy</source>
        <translation>Deploy</translation>
    </message>
    <message>
        <source>Another deployment or profile is running; cancel it first.</source>
        <translation>Another deployment or profile is running; cancel it first.</translation>
    </message>
    <message>
        <source>%1: no such engine or model file (nothing was sent).</source>
        <translation>%1: no such engine or model file (nothing was sent).</translation>
    </message>
    <message>
        <source>The folder on the board must be an absolute path (got &apos;%1&apos;).</source>
        <translation>The folder on the board must be an absolute path (got &apos;%1&apos;).</translation>
    </message>
    <message>
        <source>Uploading %1</source>
        <translation>Uploading %1</translation>
    </message>
    <message>
        <source>Attempt %1 failed: %2; retrying in %3 ms</source>
        <translation>Attempt %1 failed: %2; retrying in %3 ms</translation>
    </message>
    <message>
        <source>Connecting to %1</source>
        <translation>Connecting to %1</translation>
    </message>
    <message>
        <source>Deploying to %1 failed.</source>
        <translation>Deploying to %1 failed.</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>Profile</translation>
    </message>
    <message>
        <source>Give at least one prompt to run.</source>
        <translation>Give at least one prompt to run.</translation>
    </message>
    <message>
        <source>Prompt %1 of %2: %3 tokens</source>
        <translation>Prompt %1 of %2: %3 tokens</translation>
    </message>
    <message>
        <source>Profiling on %1 failed.</source>
        <translation>Profiling on %1 failed.</translation>
    </message>
    <message>
        <source>The board is %1: sending %2</source>
        <translation>The board is %1: sending %2</translation>
    </message>
    <message>
        <source>Measuring %1&apos;s cost model</source>
        <translation>Measuring %1&apos;s cost model</translation>
    </message>
    <message>
        <source>Cost model</source>
        <translation>Cost model</translation>
    </message>
    <message>
        <source>Deployed %1, but measuring the board&apos;s cost model failed: %2</source>
        <translation>Deployed %1, but measuring the board&apos;s cost model failed: %2</translation>
    </message>
    <message>
        <source>Serving: %1 tokens</source>
        <translation>Serving: %1 tokens</translation>
    </message>
</context>
<context>
    <name>edge::views::BoardListModel</name>
    <message>
        <source>A board needs a name without spaces (got &apos;%1&apos;).</source>
        <translation>A board needs a name without spaces (got &apos;%1&apos;).</translation>
    </message>
    <message>
        <source>There is already a board named &apos;%1&apos;.</source>
        <translation>There is already a board named &apos;%1&apos;.</translation>
    </message>
    <message>
        <source>Board &apos;%1&apos;: %2</source>
        <translation>Board &apos;%1&apos;: %2</translation>
    </message>
    <message>
        <source>Board &apos;%1&apos;: the folder on the board must be an absolute path (got &apos;%2&apos;).</source>
        <translation>Board &apos;%1&apos;: the folder on the board must be an absolute path (got &apos;%2&apos;).</translation>
    </message>
    <message>
        <source>added by you</source>
        <translation>added by you</translation>
    </message>
    <message>
        <source>ssh config</source>
        <translation>ssh config</translation>
    </message>
    <message>
        <source>Board</source>
        <translation>Board</translation>
    </message>
    <message>
        <source>Destination</source>
        <translation>Destination</translation>
    </message>
    <message>
        <source>Folder on board</source>
        <translation>Folder on board</translation>
    </message>
    <message>
        <source>From</source>
        <translation>From</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
</context>
<context>
    <name>edge::views::BoardsPage</name>
    <message>
        <source>Engine or model to deploy</source>
        <translation>Engine or model to deploy</translation>
    </message>
    <message>
        <source>Engines and models (*.edge *.gguf *.bin);;All files (*)</source>
        <translation>Engines and models (*.edge *.gguf *.bin);;All files (*)</translation>
    </message>
    <message>
        <source>Export telemetry</source>
        <translation>Export telemetry</translation>
    </message>
    <message>
        <source>CSV (*.csv)</source>
        <translation>CSV (*.csv)</translation>
    </message>
    <message>
        <source>Export charts</source>
        <translation>Export charts</translation>
    </message>
    <message>
        <source>PNG images (*.png)</source>
        <translation>PNG images (*.png)</translation>
    </message>
    <message>
        <source>PDF (*.pdf)</source>
        <translation>PDF (*.pdf)</translation>
    </message>
    <message>
        <source>Charts written: %1</source>
        <translation>Charts written: %1</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>Cancelled</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>Failed</translation>
    </message>
    <message>
        <source>Deploy</source>
        <translation>Deploy</translation>
    </message>
    <message>
        <source>Select a board first.</source>
        <translation>Select a board first.</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>Profile</translation>
    </message>
    <message>
        <source>No telemetry yet: deploy, then profile a board.</source>
        <translation>No telemetry yet: deploy, then profile a board.</translation>
    </message>
    <message>
        <source>p50 %1 ms · p99 %2 ms · %3 tok/s · RSS %4 MiB · %5 samples</source>
        <translation>p50 %1 ms · p99 %2 ms · %3 tok/s · RSS %4 MiB · %5 samples</translation>
    </message>
    <message>
        <source>Cannot write %1.</source>
        <translation>Cannot write %1.</translation>
    </message>
    <message>
        <source>Host key changed: connection refused</source>
        <translation>Host key changed: connection refused</translation>
    </message>
    <message>
        <source>Unknown host key</source>
        <translation>Unknown host key</translation>
    </message>
    <message>
        <source>The board %1 presents a host key this computer has not seen before:

%2

Compare it with the board&apos;s own fingerprint (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the board). Trust it and remember it in known_hosts?</source>
        <translation>The board %1 presents a host key this computer has not seen before:

%2

Compare it with the board&apos;s own fingerprint (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the board). Trust it and remember it in known_hosts?</translation>
    </message>
    <message>
        <source>Trust and connect</source>
        <translation>Trust and connect</translation>
    </message>
    <message>
        <source>Add board</source>
        <translation>Add board</translation>
    </message>
    <message>
        <source>user@host[:port]</source>
        <translation>user@host[:port]</translation>
    </message>
    <message>
        <source>ssh-agent or ~/.ssh keys</source>
        <translation>ssh-agent or ~/.ssh keys</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Destination</source>
        <translation>Destination</translation>
    </message>
    <message>
        <source>Folder on board</source>
        <translation>Folder on board</translation>
    </message>
    <message>
        <source>Key file</source>
        <translation>Key file</translation>
    </message>
    <message>
        <source>Deployed</source>
        <translation>Deployed</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>Finished</translation>
    </message>
    <message>
        <source>Deployed %1 to %2 as version %3 (%4 MiB sent, %5 attempt(s), %6 s).</source>
        <translation>Deployed %1 to %2 as version %3 (%4 MiB sent, %5 attempt(s), %6 s).</translation>
    </message>
    <message>
        <source>, %1 agent restart(s)</source>
        <translation>, %1 agent restart(s)</translation>
    </message>
    <message>
        <source>deployed %1</source>
        <translation>deployed %1</translation>
    </message>
    <message>
        <source>%1 tok/s</source>
        <translation>%1 tok/s</translation>
    </message>
    <message>
        <source>Boards</source>
        <translation>Boards</translation>
    </message>
    <message>
        <source>Deploy an engine with edge-agent over SSH, run it on the board and watch what the agent streams back. Boards come from ~/.ssh/config and the ones you add.</source>
        <translation>Deploy an engine with edge-agent over SSH, run it on the board and watch what the agent streams back. Boards come from ~/.ssh/config and the ones you add.</translation>
    </message>
    <message>
        <source>Add board…</source>
        <translation>Add board…</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>Remove</translation>
    </message>
    <message>
        <source>Reload</source>
        <translation>Reload</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>Engine</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>Browse…</translation>
    </message>
    <message>
        <source>Prompts (separate with |)</source>
        <translation>Prompts (separate with |)</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>Tokens</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>Window</source>
        <translation>Window</translation>
    </message>
    <message>
        <source>30 s</source>
        <translation>30 s</translation>
    </message>
    <message>
        <source>2 min</source>
        <translation>2 min</translation>
    </message>
    <message>
        <source>10 min</source>
        <translation>10 min</translation>
    </message>
    <message>
        <source>1 h</source>
        <translation>1 h</translation>
    </message>
    <message>
        <source>All kept</source>
        <translation>All kept</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>Pause</translation>
    </message>
    <message>
        <source>Export CSV…</source>
        <translation>Export CSV…</translation>
    </message>
    <message>
        <source>Export PNG…</source>
        <translation>Export PNG…</translation>
    </message>
    <message>
        <source>Export PDF…</source>
        <translation>Export PDF…</translation>
    </message>
    <message>
        <source>Not reported by this agent: %1</source>
        <translation>Not reported by this agent: %1</translation>
    </message>
    <message>
        <source>Per-token latency</source>
        <translation>Per-token latency</translation>
    </message>
    <message>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <source>token</source>
        <translation>token</translation>
    </message>
    <message>
        <source>p50</source>
        <translation>p50</translation>
    </message>
    <message>
        <source>p99</source>
        <translation>p99</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>Throughput</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>Memory</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source>RSS</source>
        <translation>RSS</translation>
    </message>
    <message>
        <source>device</source>
        <translation>device</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV cache</translation>
    </message>
    <message>
        <source>%</source>
        <translation>%</translation>
    </message>
    <message>
        <source>hit rate</source>
        <translation>hit rate</translation>
    </message>
    <message>
        <source>blocks in use</source>
        <translation>blocks in use</translation>
    </message>
    <message>
        <source>Profiled on %1: %2 prompt(s), %3 tokens; p50 %4 ms, p99 %5 ms, %6 tok/s, RSS max %7 MiB%8.</source>
        <translation>Profiled on %1: %2 prompt(s), %3 tokens; p50 %4 ms, p99 %5 ms, %6 tok/s, RSS max %7 MiB%8.</translation>
    </message>
    <message>
        <source>none (e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu for an emulated board)</source>
        <translation>none (e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu for an emulated board)</translation>
    </message>
    <message>
        <source>Run the agent under</source>
        <translation>Run the agent under</translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation>Chat template</translation>
    </message>
    <message>
        <source>Send each prompt as a user message in the engine&apos;s own chat template (instruct models); generation stops at any end-of-turn token</source>
        <translation>Send each prompt as a user message in the engine&apos;s own chat template (instruct models); generation stops at any end-of-turn token</translation>
    </message>
    <message>
        <source>Save workload</source>
        <translation>Save workload</translation>
    </message>
    <message>
        <source>workload %1</source>
        <translation>workload %1</translation>
    </message>
    <message>
        <source>Serving workload</source>
        <translation>Serving workload</translation>
    </message>
    <message>
        <source>Workloads (*.workload);;All files (*)</source>
        <translation>Workloads (*.workload);;All files (*)</translation>
    </message>
    <message>
        <source>Requests at once</source>
        <translation>Requests at once</translation>
    </message>
    <message>
        <source>Cost model measured: %1 ms per token on %2 (%3)</source>
        <translation>Cost model measured: %1 ms per token on %2 (%3)</translation>
    </message>
    <message>
        <source>%1: cannot read the workload file</source>
        <translation>%1: cannot read the workload file</translation>
    </message>
    <message>
        <source>%1: the workload file is empty</source>
        <translation>%1: the workload file is empty</translation>
    </message>
    <message>
        <source>The prompts below (not saved)</source>
        <translation>The prompts below (not saved)</translation>
    </message>
    <message>
        <source>%1 — serving %2 at concurrency %3</source>
        <translation>%1 — serving %2 at concurrency %3</translation>
    </message>
    <message numerus="yes">
        <source>%1 — %n prompt(s)</source>
        <translation>
            <numerusform>%1 — %n prompt</numerusform>
            <numerusform>%1 — %n prompts</numerusform>
        </translation>
    </message>
    <message>
        <source>Workload</source>
        <translation>Workload</translation>
    </message>
    <message>
        <source>Save prompts as…</source>
        <translation>Save prompts as…</translation>
    </message>
    <message>
        <source>Serving workload…</source>
        <translation>Serving workload…</translation>
    </message>
    <message>
        <source>An edge-workload file (as serve-bench reads) replayed through the board&apos;s scheduler: requests arriving over time, at most N at once</source>
        <translation>An edge-workload file (as serve-bench reads) replayed through the board&apos;s scheduler: requests arriving over time, at most N at once</translation>
    </message>
    <message>
        <source>Measure cost model</source>
        <translation>Measure cost model</translation>
    </message>
    <message>
        <source>After deploying, the agent times every layer shape of the engine at FP32, FP16, INT8 and INT4 on the board (edge-agent --micro-profile): the board&apos;s cost model, which predicts each configuration&apos;s time per token and guides Autoplan</source>
        <translation>After deploying, the agent times every layer shape of the engine at FP32, FP16, INT8 and INT4 on the board (edge-agent --micro-profile): the board&apos;s cost model, which predicts each configuration&apos;s time per token and guides Autoplan</translation>
    </message>
</context>
<context>
    <name>edge::views::ConfigurationModel</name>
    <message>
        <source>a plan has no &quot;layers&quot; array</source>
        <translation>a plan has no &quot;layers&quot; array</translation>
    </message>
    <message>
        <source>plan entry %1 is malformed</source>
        <translation>plan entry %1 is malformed</translation>
    </message>
    <message>
        <source>a configuration has no name or perplexity</source>
        <translation>a configuration has no name or perplexity</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 ms</translation>
    </message>
    <message>
        <source>pass</source>
        <translation>pass</translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation>FAIL</translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation>Configuration</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>Perplexity</translation>
    </message>
    <message>
        <source>Mean KL</source>
        <translation>Mean KL</translation>
    </message>
    <message>
        <source>Decode / token</source>
        <translation>Decode / token</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>Weights</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>Validation</translation>
    </message>
    <message>
        <source>plan entry %1 (%2): group %3 is not a group size</source>
        <translation>plan entry %1 (%2): group %3 is not a group size</translation>
    </message>
    <message>
        <source>plan entry %1 (%2): pruning %3 is not a ratio in [0, 1)</source>
        <translation>plan entry %1 (%2): pruning %3 is not a ratio in [0, 1)</translation>
    </message>
    <message>
        <source>configuration %1: &quot;%2&quot; is not a byte count</source>
        <translation>configuration %1: &quot;%2&quot; is not a byte count</translation>
    </message>
    <message>
        <source>configuration %1: engine %2: &quot;bytes&quot; is not a byte count</source>
        <translation>configuration %1: engine %2: &quot;bytes&quot; is not a byte count</translation>
    </message>
    <message>
        <source>configuration %1: calibration &quot;%2&quot; is not a count</source>
        <translation>configuration %1: calibration &quot;%2&quot; is not a count</translation>
    </message>
    <message>
        <source>configuration %1: calibration selection &quot;%2&quot; is not all, random or kmeans</source>
        <translation>configuration %1: calibration selection &quot;%2&quot; is not all, random or kmeans</translation>
    </message>
    <message>
        <source>configuration %1: calibration &quot;seed&quot; is not a seed</source>
        <translation>configuration %1: calibration &quot;seed&quot; is not a seed</translation>
    </message>
    <message>
        <source>configuration %1: the predicted time on %2 is not a time</source>
        <translation>configuration %1: the predicted time on %2 is not a time</translation>
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
        <translation>
            <numerusform>Edit %n layer</numerusform>
            <numerusform>Edit %n layers</numerusform>
        </translation>
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
    <message>
        <source>The model has no pruning group %1</source>
        <translation>The model has no pruning group %1</translation>
    </message>
    <message>
        <source>Pruning from the Pruning page</source>
        <translation>Pruning from the Pruning page</translation>
    </message>
    <message>
        <source>The plan has %1 layers; the open model %2</source>
        <translation>The plan has %1 layers; the open model %2</translation>
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
        <translation>
            <numerusform>Set %n layer to %1</numerusform>
            <numerusform>Set %n layers to %1</numerusform>
        </translation>
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
        <translation>
            <numerusform>%n selected layer:</numerusform>
            <numerusform>%n selected layers:</numerusform>
        </translation>
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
    <message>
        <source>Autoplan for a board…</source>
        <translation>Autoplan for a board…</translation>
    </message>
    <message>
        <source>FP16 / INT8 / INT4 per layer: the least quality loss (the Sensitivity page&apos;s measurements) within a time per token on a board (its measured cost model)</source>
        <translation>FP16 / INT8 / INT4 per layer: the least quality loss (the Sensitivity page&apos;s measurements) within a time per token on a board (its measured cost model)</translation>
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
    <name>edge::views::ParetoPage</name>
    <message numerus="yes">
        <source>%1 vs %2: %n layer(s) differ</source>
        <translation>
            <numerusform>%1 vs %2: %n layer differs</numerusform>
            <numerusform>%1 vs %2: %n layers differ</numerusform>
        </translation>
    </message>
    <message>
        <source>Select two configurations to compare their plans</source>
        <translation>Select two configurations to compare their plans</translation>
    </message>
    <message>
        <source>Hover a point for details; click it to open its plan</source>
        <translation>Hover a point for details; click it to open its plan</translation>
    </message>
    <message>
        <source>%1 · perplexity %2 (FP32 %3) · KL %4 · %5 ms/token · %6 · %7</source>
        <translation>%1 · perplexity %2 (FP32 %3) · KL %4 · %5 ms/token · %6 · %7</translation>
    </message>
    <message>
        <source>passed</source>
        <translation>passed</translation>
    </message>
    <message>
        <source>Pareto frontier</source>
        <translation>Pareto frontier</translation>
    </message>
    <message>
        <source>Pareto</source>
        <translation>Pareto</translation>
    </message>
    <message>
        <source>Cost axis</source>
        <translation>Cost axis</translation>
    </message>
    <message>
        <source>Decode latency (ms / token)</source>
        <translation>Decode latency (ms / token)</translation>
    </message>
    <message>
        <source>Weight size (KiB)</source>
        <translation>Weight size (KiB)</translation>
    </message>
    <message>
        <source>Weights, KiB</source>
        <translation>Weights, KiB</translation>
    </message>
    <message>
        <source>Perplexity (quantized)</source>
        <translation>Perplexity (quantized)</translation>
    </message>
    <message>
        <source>Open in Layers</source>
        <translation>Open in Layers</translation>
    </message>
    <message>
        <source>No configuration yet: run a validation — each run adds a point here.</source>
        <translation>No configuration yet: run a validation — each run adds a point here.</translation>
    </message>
    <message>
        <source>failed: %1</source>
        <translation>failed: %1</translation>
    </message>
    <message>
        <source>Compile cancelled</source>
        <translation>Compile cancelled</translation>
    </message>
    <message>
        <source>Open the configuration&apos;s model first.</source>
        <translation>Open the configuration&apos;s model first.</translation>
    </message>
    <message>
        <source>%1 was validated on another model: open that model to compile it.</source>
        <translation>%1 was validated on another model: open that model to compile it.</translation>
    </message>
    <message>
        <source>Cannot create the engine folder %1</source>
        <translation>Cannot create the engine folder %1</translation>
    </message>
    <message>
        <source>Compiling %1 for %2…</source>
        <translation>Compiling %1 for %2…</translation>
    </message>
    <message>
        <source>Compiling %1 failed.</source>
        <translation>Compiling %1 failed.</translation>
    </message>
    <message>
        <source>%1: %2 (%3), SHA-256 %4…</source>
        <translation>%1: %2 (%3), SHA-256 %4…</translation>
    </message>
    <message>
        <source>%1 on %2 · perplexity %3 · TPOT p50 %4 ms, p99 %5 ms · TTFT %6 ms · %7 tokens/s · peak %8 MiB</source>
        <translation>%1 on %2 · perplexity %3 · TPOT p50 %4 ms, p99 %5 ms · TTFT %6 ms · %7 tokens/s · peak %8 MiB</translation>
    </message>
    <message>
        <source>Board time per token (ms, p50)</source>
        <translation>Board time per token (ms, p50)</translation>
    </message>
    <message>
        <source>Decode latency on this host, ms per token (mean)</source>
        <translation>Decode latency on this host, ms per token (mean)</translation>
    </message>
    <message>
        <source>Time per output token on the board, ms (p50)</source>
        <translation>Time per output token on the board, ms (p50)</translation>
    </message>
    <message>
        <source>Compile engine</source>
        <translation>Compile engine</translation>
    </message>
    <message>
        <source>Quantize the selected configuration&apos;s plan (calibrated as it was validated) and compile it into a .edge engine for the chosen target</source>
        <translation>Quantize the selected configuration&apos;s plan (calibrated as it was validated) and compile it into a .edge engine for the chosen target</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>No configuration measured on a board yet: compile one, deploy it on the Boards page and profile it.</source>
        <translation>No configuration measured on a board yet: compile one, deploy it on the Boards page and profile it.</translation>
    </message>
    <message>
        <source> · predicted %1 ms (measured %2%3 %)</source>
        <translation> · predicted %1 ms (measured %2%3 %)</translation>
    </message>
    <message>
        <source> · workload %1</source>
        <translation> · workload %1</translation>
    </message>
    <message>
        <source>%1 · perplexity %2 · predicted %3 ms per token on %4 (its cost model); not measured there yet: compile, deploy and profile it</source>
        <translation>%1 · perplexity %2 · predicted %3 ms per token on %4 (its cost model); not measured there yet: compile, deploy and profile it</translation>
    </message>
    <message>
        <source>%1 · %2 (predicted)</source>
        <translation>%1 · %2 (predicted)</translation>
    </message>
    <message>
        <source>Board time to first token (ms)</source>
        <translation>Board time to first token (ms)</translation>
    </message>
    <message>
        <source>Board tokens/s (higher is better)</source>
        <translation>Board tokens/s (higher is better)</translation>
    </message>
    <message>
        <source>Board peak memory (MiB)</source>
        <translation>Board peak memory (MiB)</translation>
    </message>
    <message>
        <source>Quality axis</source>
        <translation>Quality axis</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>Perplexity</translation>
    </message>
    <message>
        <source>Mean KL divergence</source>
        <translation>Mean KL divergence</translation>
    </message>
    <message>
        <source>Top-1 agreement (%, higher is better)</source>
        <translation>Top-1 agreement (%, higher is better)</translation>
    </message>
    <message>
        <source>Time to first token on the board, ms</source>
        <translation>Time to first token on the board, ms</translation>
    </message>
    <message>
        <source>Tokens per second on the board</source>
        <translation>Tokens per second on the board</translation>
    </message>
    <message>
        <source>Peak memory on the board (agent RSS), MiB</source>
        <translation>Peak memory on the board (agent RSS), MiB</translation>
    </message>
    <message>
        <source>Mean KL divergence from FP32</source>
        <translation>Mean KL divergence from FP32</translation>
    </message>
    <message>
        <source>Top-1 agreement with FP32, %</source>
        <translation>Top-1 agreement with FP32, %</translation>
    </message>
    <message>
        <source>Each validated configuration is a point: better quality and lower cost (more tokens/s) win; the point&apos;s size and colour grow with its weights (green small, red large). The dashed line is the frontier no other configuration beats on both. On a board&apos;s time per token, hollow markers are the times its cost model predicts.</source>
        <translation>Each validated configuration is a point: better quality and lower cost (more tokens/s) win; the point&apos;s size and colour grow with its weights (green small, red large). The dashed line is the frontier no other configuration beats on both. On a board&apos;s time per token, hollow markers are the times its cost model predicts.</translation>
    </message>
</context>
<context>
    <name>edge::views::PlanDiffModel</name>
    <message>
        <source>Layer</source>
        <translation>Layer</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>perplexity</source>
        <translation>perplexity</translation>
    </message>
    <message>
        <source>mean KL</source>
        <translation>mean KL</translation>
    </message>
    <message>
        <source>top-1 agreement</source>
        <translation>top-1 agreement</translation>
    </message>
    <message>
        <source>weights</source>
        <translation>weights</translation>
    </message>
    <message>
        <source>host ms/token</source>
        <translation>host ms/token</translation>
    </message>
    <message>
        <source>calibration</source>
        <translation>calibration</translation>
    </message>
    <message>
        <source>%1: TPOT p50, ms</source>
        <translation>%1: TPOT p50, ms</translation>
    </message>
    <message>
        <source>%1: predicted TPOT, ms</source>
        <translation>%1: predicted TPOT, ms</translation>
    </message>
    <message>
        <source>%1: TTFT, ms</source>
        <translation>%1: TTFT, ms</translation>
    </message>
    <message>
        <source>%1: tokens/s</source>
        <translation>%1: tokens/s</translation>
    </message>
    <message>
        <source>%1: peak memory, MiB</source>
        <translation>%1: peak memory, MiB</translation>
    </message>
</context>
<context>
    <name>edge::views::PruningModel</name>
    <message>
        <source>pinned</source>
        <translation>pinned</translation>
    </message>
    <message>
        <source>Group</source>
        <translation>Group</translation>
    </message>
    <message>
        <source>Units</source>
        <translation>Units</translation>
    </message>
    <message>
        <source>Count</source>
        <translation>Count</translation>
    </message>
    <message>
        <source>Kept</source>
        <translation>Kept</translation>
    </message>
    <message>
        <source>Pruned</source>
        <translation>Pruned</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>Parameters</translation>
    </message>
</context>
<context>
    <name>edge::views::PruningPage</name>
    <message>
        <source>This pruning cannot be applied.</source>
        <translation>This pruning cannot be applied.</translation>
    </message>
    <message>
        <source>Planning…</source>
        <translation>Planning…</translation>
    </message>
    <message>
        <source>Open a model to see its prune groups.</source>
        <translation>Open a model to see its prune groups.</translation>
    </message>
    <message>
        <source>Parameters %1 → %2 (%3 % removed)</source>
        <translation>Parameters %1 → %2 (%3 % removed)</translation>
    </message>
    <message>
        <source>Nodes before: %1</source>
        <translation>Nodes before: %1</translation>
    </message>
    <message>
        <source>Nodes after:  %1</source>
        <translation>Nodes after:  %1</translation>
    </message>
    <message>
        <source>Shape %1 → %2</source>
        <translation>Shape %1 → %2</translation>
    </message>
    <message>
        <source>%1 is pinned: %2</source>
        <translation>%1 is pinned: %2</translation>
    </message>
    <message>
        <source>%1: keeps %2 of %3 %4: %5</source>
        <translation>%1: keeps %2 of %3 %4: %5</translation>
    </message>
    <message>
        <source>removes: %1</source>
        <translation>removes: %1</translation>
    </message>
    <message>
        <source>query heads kept: %1</source>
        <translation>query heads kept: %1</translation>
    </message>
    <message>
        <source>Pruning</source>
        <translation>Pruning</translation>
    </message>
    <message>
        <source>Structured pruning removes whole units: KV heads (with their query group) and MLP channels of an LLM block, output channels of a CNN convolution. Units with the smallest weight magnitude go first. Double-click a ratio to edit one group.</source>
        <translation>Structured pruning removes whole units: KV heads (with their query group) and MLP channels of an LLM block, output channels of a CNN convolution. Units with the smallest weight magnitude go first. Double-click a ratio to edit one group.</translation>
    </message>
    <message>
        <source>Ratio for every group</source>
        <translation>Ratio for every group</translation>
    </message>
    <message>
        <source>KV heads</source>
        <translation>KV heads</translation>
    </message>
    <message>
        <source>MLP channels</source>
        <translation>MLP channels</translation>
    </message>
    <message>
        <source>Reset edited ratios</source>
        <translation>Reset edited ratios</translation>
    </message>
    <message>
        <source>Units of each group: kept (blue), removed (red), pinned (grey)</source>
        <translation>Units of each group: kept (blue), removed (red), pinned (grey)</translation>
    </message>
    <message>
        <source>Use in the plan</source>
        <translation>Use in the plan</translation>
    </message>
    <message>
        <source>Put these ratios into the Layers plan: validation, compile and deploy then prune the model first</source>
        <translation>Put these ratios into the Layers plan: validation, compile and deploy then prune the model first</translation>
    </message>
</context>
<context>
    <name>edge::views::SensitivityModel</name>
    <message>
        <source>Sensitivity: no model is open</source>
        <translation>Sensitivity: no model is open</translation>
    </message>
    <message>
        <source>Sensitivity: cannot read the evaluation text %1</source>
        <translation>Sensitivity: cannot read the evaluation text %1</translation>
    </message>
    <message>
        <source>%1: not a JSON object (%2)</source>
        <translation>%1: not a JSON object (%2)</translation>
    </message>
    <message>
        <source>%1: no &quot;layers&quot; array or object</source>
        <translation>%1: no &quot;layers&quot; array or object</translation>
    </message>
    <message>
        <source>%1: layer &apos;%2&apos; is not in the open model</source>
        <translation>%1: layer &apos;%2&apos; is not in the open model</translation>
    </message>
    <message>
        <source>%1: no numeric per-layer values</source>
        <translation>%1: no numeric per-layer values</translation>
    </message>
    <message>
        <source>INT4 KL, mean</source>
        <translation>INT4 KL, mean</translation>
    </message>
    <message>
        <source>INT4 KL, max</source>
        <translation>INT4 KL, max</translation>
    </message>
    <message>
        <source>INT4 ΔNLL</source>
        <translation>INT4 ΔNLL</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>Layer</translation>
    </message>
</context>
<context>
    <name>edge::views::SensitivityPage</name>
    <message>
        <source>Load analysis</source>
        <translation>Load analysis</translation>
    </message>
    <message>
        <source>Analysis JSON (*.json);;All files (*)</source>
        <translation>Analysis JSON (*.json);;All files (*)</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>Cancelled</translation>
    </message>
    <message>
        <source>Open a model first.</source>
        <translation>Open a model first.</translation>
    </message>
    <message>
        <source>Quantizing each layer alone…</source>
        <translation>Quantizing each layer alone…</translation>
    </message>
    <message>
        <source>Sensitivity analysis failed</source>
        <translation>Sensitivity analysis failed</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>Done</translation>
    </message>
    <message>
        <source>Cannot read %1</source>
        <translation>Cannot read %1</translation>
    </message>
    <message>
        <source>blk %1</source>
        <translation>blk %1</translation>
    </message>
    <message>
        <source>Layer (execution order)</source>
        <translation>Layer (execution order)</translation>
    </message>
    <message>
        <source>Hessian eigenvalue spectrum of %1</source>
        <translation>Hessian eigenvalue spectrum of %1</translation>
    </message>
    <message>
        <source>Click a bar to select its layer in the Layers table</source>
        <translation>Click a bar to select its layer in the Layers table</translation>
    </message>
    <message>
        <source>Sensitivity</source>
        <translation>Sensitivity</translation>
    </message>
    <message>
        <source>How much each layer hurts when it alone is quantized to INT4 (RTN, group 32): the KL divergence from the FP32 model and the change in next-token loss on the evaluation text. Analysis files add Hessian and gradient metrics.</source>
        <translation>How much each layer hurts when it alone is quantized to INT4 (RTN, group 32): the KL divergence from the FP32 model and the change in next-token loss on the evaluation text. Analysis files add Hessian and gradient metrics.</translation>
    </message>
    <message>
        <source>Evaluation text</source>
        <translation>Evaluation text</translation>
    </message>
    <message>
        <source>Analyse</source>
        <translation>Analyse</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>Load analysis JSON…</source>
        <translation>Load analysis JSON…</translation>
    </message>
    <message>
        <source>Metric</source>
        <translation>Metric</translation>
    </message>
    <message>
        <source>Layer × metric (each metric scaled to its maximum)</source>
        <translation>Layer × metric (each metric scaled to its maximum)</translation>
    </message>
    <message>
        <source>No sensitivity yet: press Analyse.</source>
        <translation>No sensitivity yet: press Analyse.</translation>
    </message>
    <message>
        <source>Layers by sensitivity (an analysis file adds eigenvalue spectra)</source>
        <translation>Layers by sensitivity (an analysis file adds eigenvalue spectra)</translation>
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
    <message>
        <source>%1 in the file, read when a job needs it</source>
        <translation>%1 in the file, read when a job needs it</translation>
    </message>
    <message>
        <source>RoPE scaling</source>
        <translation>RoPE scaling</translation>
    </message>
    <message>
        <source>Q/K/V biases</source>
        <translation>Q/K/V biases</translation>
    </message>
    <message>
        <source>none</source>
        <translation>none</translation>
    </message>
</context>
<context>
    <name>edge::views::TelemetryChart</name>
    <message>
        <source>time (s)</source>
        <translation>time (s)</translation>
    </message>
    <message>
        <source>EdgeStudio</source>
        <translation>EdgeStudio</translation>
    </message>
</context>
<context>
    <name>edge::views::TelemetryStore</name>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>Cannot write %1: %2</translation>
    </message>
</context>
<context>
    <name>edge::views::ValidationLayerModel</name>
    <message>
        <source>Layer</source>
        <translation>Layer</translation>
    </message>
    <message>
        <source>Activations checked</source>
        <translation>Activations checked</translation>
    </message>
    <message>
        <source>NaN</source>
        <translation>NaN</translation>
    </message>
    <message>
        <source>Inf</source>
        <translation>Inf</translation>
    </message>
    <message>
        <source>Smallest scale</source>
        <translation>Smallest scale</translation>
    </message>
    <message>
        <source>Largest scale</source>
        <translation>Largest scale</translation>
    </message>
    <message>
        <source>Scale range</source>
        <translation>Scale range</translation>
    </message>
</context>
<context>
    <name>edge::views::ValidationPage</name>
    <message>
        <source>Evaluation text</source>
        <translation>Evaluation text</translation>
    </message>
    <message>
        <source>Text (*.txt);;All files (*)</source>
        <translation>Text (*.txt);;All files (*)</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>Cancelled</translation>
    </message>
    <message>
        <source>Open a model first.</source>
        <translation>Open a model first.</translation>
    </message>
    <message>
        <source>Quantizing…</source>
        <translation>Quantizing…</translation>
    </message>
    <message>
        <source>Validation failed</source>
        <translation>Validation failed</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>Done</translation>
    </message>
    <message>
        <source>No validation run yet: set a plan on the Layers page, then Run.</source>
        <translation>No validation run yet: set a plan on the Layers page, then Run.</translation>
    </message>
    <message>
        <source>Passed: every check is within its threshold.</source>
        <translation>Passed: every check is within its threshold.</translation>
    </message>
    <message>
        <source>Failed: %1</source>
        <translation>Failed: %1</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>Validation</translation>
    </message>
    <message>
        <source>The open model quantized with the Layers page&apos;s plan, checked against the FP32 model: perplexity, KL divergence, top-1 agreement, numeric health, bit-flip fault injection and decode jitter. Double-click a threshold to change it.</source>
        <translation>The open model quantized with the Layers page&apos;s plan, checked against the FP32 model: perplexity, KL divergence, top-1 agreement, numeric health, bit-flip fault injection and decode jitter. Double-click a threshold to change it.</translation>
    </message>
    <message>
        <source>A text file the model should predict well</source>
        <translation>A text file the model should predict well</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>Browse…</translation>
    </message>
    <message>
        <source>Split into</source>
        <translation>Split into</translation>
    </message>
    <message>
        <source>stories (&lt;|endoftext|&gt;)</source>
        <translation>stories (&lt;|endoftext|&gt;)</translation>
    </message>
    <message>
        <source>paragraphs (blank lines)</source>
        <translation>paragraphs (blank lines)</translation>
    </message>
    <message>
        <source>Parts scored</source>
        <translation>Parts scored</translation>
    </message>
    <message>
        <source>Bit-flip injection (1 % of codes)</source>
        <translation>Bit-flip injection (1 % of codes)</translation>
    </message>
    <message>
        <source>Run validation</source>
        <translation>Run validation</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>Per layer: input activations checked for NaN / Inf, and the quantized scales&apos; range</source>
        <translation>Per layer: input activations checked for NaN / Inf, and the quantized scales&apos; range</translation>
    </message>
    <message>
        <source>Calibration text</source>
        <translation>Calibration text</translation>
    </message>
    <message>
        <source>Calibrated on %1</source>
        <translation>Calibrated on %1</translation>
    </message>
    <message>
        <source>AWQ/GPTQ: empty = the evaluation text without the parts it scores</source>
        <translation>AWQ/GPTQ: empty = the evaluation text without the parts it scores</translation>
    </message>
    <message>
        <source>Calibrate on</source>
        <translation>Calibrate on</translation>
    </message>
    <message>
        <source>every paragraph, in order</source>
        <translation>every paragraph, in order</translation>
    </message>
    <message>
        <source>k-means representatives</source>
        <translation>k-means representatives</translation>
    </message>
    <message>
        <source>a random draw</source>
        <translation>a random draw</translation>
    </message>
    <message>
        <source>k-means: the paragraphs nearest the centres of clusters of the model&apos;s own embeddings (what calib-select does); random: a seeded uniform draw. Either chooses among the paragraphs left after those the evaluation scores are removed.</source>
        <translation>k-means: the paragraphs nearest the centres of clusters of the model&apos;s own embeddings (what calib-select does); random: a seeded uniform draw. Either chooses among the paragraphs left after those the evaluation scores are removed.</translation>
    </message>
    <message>
        <source>paragraphs</source>
        <translation>paragraphs</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>seed</translation>
    </message>
    <message>
        <source>  sequences</source>
        <translation>  sequences</translation>
    </message>
    <message>
        <source>× tokens</source>
        <translation>× tokens</translation>
    </message>
</context>
<context>
    <name>edge::views::ValidationReportModel</name>
    <message>
        <source>Perplexity (FP32 → quantized)</source>
        <translation>Perplexity (FP32 → quantized)</translation>
    </message>
    <message>
        <source>Mean KL divergence</source>
        <translation>Mean KL divergence</translation>
    </message>
    <message>
        <source>KL divergence, p99</source>
        <translation>KL divergence, p99</translation>
    </message>
    <message>
        <source>Top-1 agreement</source>
        <translation>Top-1 agreement</translation>
    </message>
    <message>
        <source>Numeric health (NaN / Inf)</source>
        <translation>Numeric health (NaN / Inf)</translation>
    </message>
    <message>
        <source>Scale dynamic range</source>
        <translation>Scale dynamic range</translation>
    </message>
    <message>
        <source>Bit flips: top-1 confidence drop</source>
        <translation>Bit flips: top-1 confidence drop</translation>
    </message>
    <message>
        <source>Decode jitter (p99 − p50)</source>
        <translation>Decode jitter (p99 − p50)</translation>
    </message>
    <message>
        <source>%1 → %2 (%3 tokens)</source>
        <translation>%1 → %2 (%3 tokens)</translation>
    </message>
    <message>
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <source>%1 non-finite of %2 activations in %3 layers</source>
        <translation>%1 non-finite of %2 activations in %3 layers</translation>
    </message>
    <message>
        <source>no quantized scales</source>
        <translation>no quantized scales</translation>
    </message>
    <message>
        <source>max %1 over %2 tensors</source>
        <translation>max %1 over %2 tensors</translation>
    </message>
    <message>
        <source>not run</source>
        <translation>not run</translation>
    </message>
    <message>
        <source>%1 % (%2 codes flipped, top-1 agreement %3 %)</source>
        <translation>%1 % (%2 codes flipped, top-1 agreement %3 %)</translation>
    </message>
    <message>
        <source>%1 ms (p50 %2 ms, p99 %3 ms, %4 tokens/s)</source>
        <translation>%1 ms (p50 %2 ms, p99 %3 ms, %4 tokens/s)</translation>
    </message>
    <message>
        <source>&lt; %1</source>
        <translation>&lt; %1</translation>
    </message>
    <message>
        <source>≤ %1</source>
        <translation>≤ %1</translation>
    </message>
    <message>
        <source>≤ %1 %</source>
        <translation>≤ %1 %</translation>
    </message>
    <message>
        <source>&lt; %1 ms</source>
        <translation>&lt; %1 ms</translation>
    </message>
    <message>
        <source>pass</source>
        <translation>pass</translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation>FAIL</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>warning</translation>
    </message>
    <message>
        <source>info</source>
        <translation>info</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>Check</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>Measured</translation>
    </message>
    <message>
        <source>Threshold</source>
        <translation>Threshold</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>Result</translation>
    </message>
</context>
<context>
    <name>edge::views::WorkloadListModel</name>
    <message>
        <source>a workload needs a name</source>
        <translation>a workload needs a name</translation>
    </message>
    <message>
        <source>workload %1: the serving workload has no request</source>
        <translation>workload %1: the serving workload has no request</translation>
    </message>
    <message>
        <source>workload %1: concurrency %2 is not a count of requests</source>
        <translation>workload %1: concurrency %2 is not a count of requests</translation>
    </message>
    <message>
        <source>workload %1 has no prompt</source>
        <translation>workload %1 has no prompt</translation>
    </message>
    <message>
        <source>workload %1: %2 is not a count of tokens</source>
        <translation>workload %1: %2 is not a count of tokens</translation>
    </message>
    <message>
        <source>Serving workload %1 at concurrency %2</source>
        <translation>Serving workload %1 at concurrency %2</translation>
    </message>
    <message numerus="yes">
        <source>%n prompt(s), %1 tokens each</source>
        <translation>
            <numerusform>%n prompt, %1 tokens each</numerusform>
            <numerusform>%n prompts, %1 tokens each</numerusform>
        </translation>
    </message>
</context>
</TS>
