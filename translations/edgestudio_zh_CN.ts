<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Autoplan</name>
    <message>
        <source>Autoplan: no model is open</source>
        <translation>自动方案：未打开模型</translation>
    </message>
    <message>
        <source>Autoplan needs each layer&apos;s sensitivity: run the Sensitivity page first</source>
        <translation>自动方案需要每一层的敏感度：请先运行“敏感度”页面</translation>
    </message>
    <message>
        <source>Each layer&apos;s error at FP16, INT8 and INT4</source>
        <translation>每一层在 FP16、INT8 和 INT4 下的误差</translation>
    </message>
    <message>
        <source>Autoplan cancelled</source>
        <translation>自动方案已取消</translation>
    </message>
    <message>
        <source>Choosing precisions within the budget</source>
        <translation>在预算内选择精度</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完成</translation>
    </message>
</context>
<context>
    <name>LayerPlan</name>
    <message>
        <source>%1: a pruning ratio must be between 0 and %2 %</source>
        <translation>%1：剪枝比例必须在 0 到 %2 % 之间</translation>
    </message>
    <message>
        <source>%1: %2 takes no quantization method</source>
        <translation>%1：%2 不使用量化方法</translation>
    </message>
    <message>
        <source>%1: %2 needs a method (RTN, AWQ or GPTQ)</source>
        <translation>%1：%2 需要量化方法（RTN、AWQ 或 GPTQ）</translation>
    </message>
    <message>
        <source>%1: the group size must be positive</source>
        <translation>%1：分组大小必须为正数</translation>
    </message>
    <message>
        <source>%1: group size %2 is larger than a row (%3 elements)</source>
        <translation>%1：分组大小 %2 超过一行的长度（%3 个元素）</translation>
    </message>
    <message>
        <source>%1: the output head shares the token embedding; only RTN can quantize it</source>
        <translation>%1：输出层与词嵌入共享权重，只能用 RTN 量化</translation>
    </message>
    <message>
        <source>Could not open the plan %1: %2</source>
        <translation>无法打开量化方案 %1：%2</translation>
    </message>
    <message>
        <source>the plan does not match the model&apos;s layers</source>
        <translation>方案与模型的层不匹配</translation>
    </message>
    <message>
        <source>%1 uses flat groups, which the Layers page cannot edit</source>
        <translation>%1 使用扁平分组，层页面无法编辑</translation>
    </message>
    <message>
        <source>pruning names the unknown layer %1</source>
        <translation>剪枝设置引用了未知的层 %1</translation>
    </message>
    <message>
        <source>%1: only attention and MLP layers are pruned (whole heads or channels)</source>
        <translation>%1：只有注意力层和 MLP 层可以剪枝（整头或整通道）</translation>
    </message>
</context>
<context>
    <name>Project</name>
    <message>
        <source>%1: not a project file (%2 at byte %3)</source>
        <translation>%1：不是项目文件（第 %3 字节处%2）</translation>
    </message>
    <message>
        <source>%1: not a project file (no &quot;format&quot;: &quot;edgeproj&quot;)</source>
        <translation>%1：不是项目文件（缺少 &quot;format&quot;: &quot;edgeproj&quot;）</translation>
    </message>
    <message>
        <source>%1: project version %2 is not supported</source>
        <translation>%1：不支持项目版本 %2</translation>
    </message>
    <message>
        <source>%1: the project names no model</source>
        <translation>%1：项目未指定模型</translation>
    </message>
    <message>
        <source>%1: cannot write (%2)</source>
        <translation>%1：无法写入（%2）</translation>
    </message>
    <message>
        <source>%1: cannot read (%2)</source>
        <translation>%1：无法读取（%2）</translation>
    </message>
</context>
<context>
    <name>PruningModel</name>
    <message>
        <source>KV heads</source>
        <translation>KV 头</translation>
    </message>
    <message>
        <source>MLP channels</source>
        <translation>MLP 通道</translation>
    </message>
    <message>
        <source>conv channels</source>
        <translation>卷积通道</translation>
    </message>
</context>
<context>
    <name>Validation</name>
    <message>
        <source>Validation: no model is open</source>
        <translation>验证：未打开模型</translation>
    </message>
    <message>
        <source>Validation: the plan does not match the open model</source>
        <translation>验证：方案与打开的模型不匹配</translation>
    </message>
    <message>
        <source>Validation: every layer is FP32 — set a precision on the Layers page first</source>
        <translation>验证：所有层均为 FP32——请先在“层”页面设置精度</translation>
    </message>
    <message>
        <source>Validation: cannot read the evaluation text %1</source>
        <translation>验证：无法读取评估文本 %1</translation>
    </message>
    <message>
        <source>Validation: the evaluation text %1 is empty</source>
        <translation>验证：评估文本 %1 为空</translation>
    </message>
    <message>
        <source>Validation cancelled</source>
        <translation>验证已取消</translation>
    </message>
    <message>
        <source>mean KL %1 ≥ %2</source>
        <translation>平均 KL %1 ≥ %2</translation>
    </message>
    <message>
        <source>%1: %2 NaN and %3 Inf activations</source>
        <translation>%1：%2 个 NaN 和 %3 个 Inf 激活值</translation>
    </message>
    <message>
        <source>bit flips drop top-1 confidence by %1 %</source>
        <translation>比特翻转使 top-1 置信度下降 %1 %</translation>
    </message>
    <message>
        <source>decode jitter p99−p50 %1 ms ≥ %2 ms</source>
        <translation>解码抖动 p99−p50 %1 ms ≥ %2 ms</translation>
    </message>
    <message>
        <source>Calibration: cannot read the calibration text %1</source>
        <translation>校准：无法读取校准文本 %1</translation>
    </message>
    <message>
        <source>Compile: no model is open</source>
        <translation>编译：未打开模型</translation>
    </message>
    <message>
        <source>Compile: the plan does not match the open model</source>
        <translation>编译：方案与打开的模型不匹配</translation>
    </message>
    <message>
        <source>Compile: cannot read the evaluation text %1</source>
        <translation>编译：无法读取评估文本 %1</translation>
    </message>
    <message>
        <source>Compile cancelled</source>
        <translation>编译已取消</translation>
    </message>
    <message>
        <source>the plan&apos;s pruning</source>
        <translation>方案中的剪枝</translation>
    </message>
    <message>
        <source>Calibration: %1</source>
        <translation>校准：%1</translation>
    </message>
    <message>
        <source>Calibration cancelled</source>
        <translation>校准已取消</translation>
    </message>
    <message>
        <source>; %1 chose %2 of %3 paragraphs (seed %4)</source>
        <translation>；%1 从 %3 个段落中选出 %2 个（种子 %4）</translation>
    </message>
    <message>
        <source>k-means</source>
        <translation>k-means</translation>
    </message>
    <message>
        <source>a random draw</source>
        <translation>随机抽取</translation>
    </message>
</context>
<context>
    <name>edge::studio::BoardAutoplan</name>
    <message>
        <source>Open a model first.</source>
        <translation>请先打开模型。</translation>
    </message>
    <message>
        <source>%1 has no cost model yet: deploy to it with &quot;Measure cost model&quot; ticked on the Boards page.</source>
        <translation>%1 尚无成本模型：请在“开发板”页面勾选“测量成本模型”后部署到该开发板。</translation>
    </message>
    <message>
        <source>Autoplan needs each layer&apos;s sensitivity: run the Sensitivity page first.</source>
        <translation>自动方案需要每一层的敏感度：请先运行“敏感度”页面。</translation>
    </message>
    <message>
        <source>predicted %1 ms per token on %2: %3 INT4, %4 INT8, %5 FP16 layers, %6 bits per weight</source>
        <translation>预计在 %2 上每词元 %1 ms：%3 层 INT4、%4 层 INT8、%5 层 FP16，平均每权重 %6 位</translation>
    </message>
    <message>
        <source>Autoplan for %1</source>
        <translation>为 %1 自动生成方案</translation>
    </message>
    <message>
        <source>Autoplan for a board</source>
        <translation>为开发板自动生成方案</translation>
    </message>
    <message>
        <source>No board has a cost model yet. On the Boards page, tick &quot;Measure cost model&quot; and deploy: the agent times the board on the engine it receives.</source>
        <translation>还没有任何开发板具有成本模型。请在“开发板”页面勾选“测量成本模型”并部署：代理会用收到的引擎对开发板计时。</translation>
    </message>
    <message>
        <source> ms</source>
        <translation> ms</translation>
    </message>
    <message>
        <source>%1 ran its engine (%2) at %3 ms per token; %4 of it outside the layers&apos; products.</source>
        <translation>%1 运行其引擎（%2）每词元 %3 ms；其中 %4 ms 在各层矩阵乘之外。</translation>
    </message>
    <message>
        <source>Board</source>
        <translation>开发板</translation>
    </message>
    <message>
        <source>Time per token at most</source>
        <translation>每词元时间上限</translation>
    </message>
</context>
<context>
    <name>edge::studio::MainWindow</name>
    <message>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>Loaded %1</source>
        <translation>已加载 %1</translation>
    </message>
    <message>
        <source>Loading cancelled</source>
        <translation>已取消加载</translation>
    </message>
    <message>
        <source>About EdgeStudio</source>
        <translation>关于 EdgeStudio</translation>
    </message>
    <message>
        <source>&lt;b&gt;EdgeStudio %1&lt;/b&gt;&lt;p&gt;Deploy neural networks on low-resource boards: inspect, quantize, prune, compile and measure.&lt;/p&gt;</source>
        <translation>&lt;b&gt;EdgeStudio %1&lt;/b&gt;&lt;p&gt;将神经网络部署到低资源开发板：检查、量化、剪枝、编译与测量。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Clear list</source>
        <translation>清空列表</translation>
    </message>
    <message>
        <source>Could not open the model</source>
        <translation>无法打开模型</translation>
    </message>
    <message>
        <source>Open model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <source>No model</source>
        <translation>无模型</translation>
    </message>
    <message>
        <source>%1  ·  %2 parameters  ·  %3  ·  %4 layers</source>
        <translation>%1  ·  %2 参数  ·  %3  ·  %4 层</translation>
    </message>
    <message>
        <source>Home</source>
        <translation>主页</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open model…</source>
        <translation>打开模型(&amp;O)…</translation>
    </message>
    <message>
        <source>Open &amp;folder…</source>
        <translation>打开文件夹(&amp;F)…</translation>
    </message>
    <message>
        <source>Open &amp;recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About EdgeStudio</source>
        <translation>关于 EdgeStudio(&amp;A)</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>逐层量化</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>Configuration %1 added to the Pareto page</source>
        <translation>配置 %1 已添加到帕累托页面</translation>
    </message>
    <message>
        <source>Open project</source>
        <translation>打开项目</translation>
    </message>
    <message>
        <source>Save project</source>
        <translation>保存项目</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <source>EdgeStudio projects (*.edgeproj)</source>
        <translation>EdgeStudio 项目 (*.edgeproj)</translation>
    </message>
    <message>
        <source>Recover session</source>
        <translation>恢复会话</translation>
    </message>
    <message>
        <source>EdgeStudio did not exit cleanly last time. Recover the autosaved project (model, plan and results)?</source>
        <translation>EdgeStudio 上次未正常退出。是否恢复自动保存的项目（模型、方案和结果）？</translation>
    </message>
    <message>
        <source>Plan of %1 opened in the Layers page</source>
        <translation>已在“层”页面打开 %1 的方案</translation>
    </message>
    <message>
        <source>Sensitivity</source>
        <translation>敏感度</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>验证</translation>
    </message>
    <message>
        <source>Pareto</source>
        <translation>帕累托</translation>
    </message>
    <message>
        <source>Open &amp;project…</source>
        <translation>打开项目(&amp;P)…</translation>
    </message>
    <message>
        <source>&amp;Save project</source>
        <translation>保存项目(&amp;S)</translation>
    </message>
    <message>
        <source>Save project &amp;as…</source>
        <translation>项目另存为(&amp;A)…</translation>
    </message>
    <message>
        <source>Boards</source>
        <translation>开发板</translation>
    </message>
    <message>
        <source>Pruning</source>
        <translation>剪枝</translation>
    </message>
    <message>
        <source>%1 compiled: %2 (the Boards page deploys it)</source>
        <translation>%1 已编译：%2（“开发板”页面将部署它）</translation>
    </message>
    <message>
        <source>The engine profiled on %1 was not compiled from a configuration of this project</source>
        <translation>在 %1 上分析的引擎并非由本项目的配置编译而来</translation>
    </message>
    <message>
        <source>%1 measured on %2: %3 ms per token (p50); shown on the Pareto page</source>
        <translation>%1 在 %2 上的测量结果：每词元 %3 ms（p50）；已显示在帕累托页面</translation>
    </message>
    <message>
        <source>The project</source>
        <translation>该项目</translation>
    </message>
    <message>
        <source>The project %1</source>
        <translation>项目 %1</translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <source>%1 has changes that are not saved. Save them before closing?</source>
        <translation>%1 有尚未保存的更改。关闭前是否保存？</translation>
    </message>
    <message>
        <source>Discarding also removes the autosaved copy.</source>
        <translation>放弃更改也会删除自动保存的副本。</translation>
    </message>
    <message>
        <source>Untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <source>%1[*] — EdgeStudio</source>
        <translation>%1[*] — EdgeStudio</translation>
    </message>
    <message numerus="yes">
        <source>The plan now prunes %n group(s)</source>
        <translation>
            <numerusform>方案现在剪枝 %n 个组</numerusform>
        </translation>
    </message>
    <message>
        <source>Autoplan for a board</source>
        <translation>为开发板自动生成方案</translation>
    </message>
    <message>
        <source>Autoplan: %1. Validate it to add the configuration.</source>
        <translation>自动方案：%1。请验证它以添加该配置。</translation>
    </message>
</context>
<context>
    <name>edge::views::BoardController</name>
    <message>
        <source>Deploy</source>
        <translation>部署</translation>
    </message>
    <message>
        <source>Another deployment or profile is running; cancel it first.</source>
        <translation>另一个部署或性能分析正在运行；请先取消它。</translation>
    </message>
    <message>
        <source>%1: no such engine or model file (nothing was sent).</source>
        <translation>%1：没有这个引擎或模型文件（未发送任何内容）。</translation>
    </message>
    <message>
        <source>The folder on the board must be an absolute path (got &apos;%1&apos;).</source>
        <translation>开发板上的文件夹必须是绝对路径（得到的是“%1”）。</translation>
    </message>
    <message>
        <source>Uploading %1</source>
        <translation>正在上传 %1</translation>
    </message>
    <message>
        <source>Attempt %1 failed: %2; retrying in %3 ms</source>
        <translation>第 %1 次尝试失败：%2；%3 ms 后重试</translation>
    </message>
    <message>
        <source>Connecting to %1</source>
        <translation>正在连接 %1</translation>
    </message>
    <message>
        <source>Deploying to %1 failed.</source>
        <translation>部署到 %1 失败。</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>性能分析</translation>
    </message>
    <message>
        <source>Give at least one prompt to run.</source>
        <translation>请至少提供一个要运行的提示词。</translation>
    </message>
    <message>
        <source>Prompt %1 of %2: %3 tokens</source>
        <translation>提示词 %1/%2：%3 个词元</translation>
    </message>
    <message>
        <source>Profiling on %1 failed.</source>
        <translation>在 %1 上的性能分析失败。</translation>
    </message>
    <message>
        <source>The board is %1: sending %2</source>
        <translation>开发板架构为 %1：发送 %2</translation>
    </message>
    <message>
        <source>Measuring %1&apos;s cost model</source>
        <translation>正在测量 %1 的成本模型</translation>
    </message>
    <message>
        <source>Cost model</source>
        <translation>成本模型</translation>
    </message>
    <message>
        <source>Deployed %1, but measuring the board&apos;s cost model failed: %2</source>
        <translation>已部署 %1，但测量开发板的成本模型失败：%2</translation>
    </message>
    <message>
        <source>Serving: %1 tokens</source>
        <translation>服务中：%1 个词元</translation>
    </message>
</context>
<context>
    <name>edge::views::BoardListModel</name>
    <message>
        <source>A board needs a name without spaces (got &apos;%1&apos;).</source>
        <translation>开发板名称不能为空且不能含空格（得到的是“%1”）。</translation>
    </message>
    <message>
        <source>There is already a board named &apos;%1&apos;.</source>
        <translation>已存在名为“%1”的开发板。</translation>
    </message>
    <message>
        <source>Board &apos;%1&apos;: %2</source>
        <translation>开发板“%1”：%2</translation>
    </message>
    <message>
        <source>Board &apos;%1&apos;: the folder on the board must be an absolute path (got &apos;%2&apos;).</source>
        <translation>开发板“%1”：开发板上的文件夹必须是绝对路径（得到的是“%2”）。</translation>
    </message>
    <message>
        <source>added by you</source>
        <translation>手动添加</translation>
    </message>
    <message>
        <source>ssh config</source>
        <translation>ssh 配置</translation>
    </message>
    <message>
        <source>Board</source>
        <translation>开发板</translation>
    </message>
    <message>
        <source>Destination</source>
        <translation>目标地址</translation>
    </message>
    <message>
        <source>Folder on board</source>
        <translation>开发板上的文件夹</translation>
    </message>
    <message>
        <source>From</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
</context>
<context>
    <name>edge::views::BoardsPage</name>
    <message>
        <source>Engine or model to deploy</source>
        <translation>要部署的引擎或模型</translation>
    </message>
    <message>
        <source>Engines and models (*.edge *.gguf *.bin);;All files (*)</source>
        <translation>引擎和模型 (*.edge *.gguf *.bin);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Export telemetry</source>
        <translation>导出遥测数据</translation>
    </message>
    <message>
        <source>CSV (*.csv)</source>
        <translation>CSV (*.csv)</translation>
    </message>
    <message>
        <source>Export charts</source>
        <translation>导出图表</translation>
    </message>
    <message>
        <source>PNG images (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <source>PDF (*.pdf)</source>
        <translation>PDF (*.pdf)</translation>
    </message>
    <message>
        <source>Charts written: %1</source>
        <translation>已写入图表：%1</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Deploy</source>
        <translation>部署</translation>
    </message>
    <message>
        <source>Select a board first.</source>
        <translation>请先选择一个开发板。</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>性能分析</translation>
    </message>
    <message>
        <source>No telemetry yet: deploy, then profile a board.</source>
        <translation>尚无遥测数据：请先部署，再对开发板进行性能分析。</translation>
    </message>
    <message>
        <source>p50 %1 ms · p99 %2 ms · %3 tok/s · RSS %4 MiB · %5 samples</source>
        <translation>p50 %1 ms · p99 %2 ms · %3 词元/秒 · RSS %4 MiB · %5 个样本</translation>
    </message>
    <message>
        <source>Cannot write %1.</source>
        <translation>无法写入 %1。</translation>
    </message>
    <message>
        <source>Host key changed: connection refused</source>
        <translation>主机密钥已更改：拒绝连接</translation>
    </message>
    <message>
        <source>Unknown host key</source>
        <translation>未知的主机密钥</translation>
    </message>
    <message>
        <source>The board %1 presents a host key this computer has not seen before:

%2

Compare it with the board&apos;s own fingerprint (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the board). Trust it and remember it in known_hosts?</source>
        <translation>开发板 %1 提供了本机从未见过的主机密钥：

%2

请与开发板自身的指纹核对（在开发板上运行 ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub）。是否信任该密钥并记入 known_hosts？</translation>
    </message>
    <message>
        <source>Trust and connect</source>
        <translation>信任并连接</translation>
    </message>
    <message>
        <source>Add board</source>
        <translation>添加开发板</translation>
    </message>
    <message>
        <source>user@host[:port]</source>
        <translation>用户@主机[:端口]</translation>
    </message>
    <message>
        <source>ssh-agent or ~/.ssh keys</source>
        <translation>ssh-agent 或 ~/.ssh 中的密钥</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Destination</source>
        <translation>目标地址</translation>
    </message>
    <message>
        <source>Folder on board</source>
        <translation>开发板上的文件夹</translation>
    </message>
    <message>
        <source>Key file</source>
        <translation>密钥文件</translation>
    </message>
    <message>
        <source>Deployed</source>
        <translation>已部署</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>Deployed %1 to %2 as version %3 (%4 MiB sent, %5 attempt(s), %6 s).</source>
        <translation>已将 %1 部署到 %2，版本 %3（发送 %4 MiB，尝试 %5 次，用时 %6 秒）。</translation>
    </message>
    <message>
        <source>, %1 agent restart(s)</source>
        <translation>，代理重启 %1 次</translation>
    </message>
    <message>
        <source>deployed %1</source>
        <translation>已部署 %1</translation>
    </message>
    <message>
        <source>%1 tok/s</source>
        <translation>%1 词元/秒</translation>
    </message>
    <message>
        <source>Boards</source>
        <translation>开发板</translation>
    </message>
    <message>
        <source>Deploy an engine with edge-agent over SSH, run it on the board and watch what the agent streams back. Boards come from ~/.ssh/config and the ones you add.</source>
        <translation>通过 SSH 将引擎连同 edge-agent 部署到开发板，在板上运行，并实时查看代理回传的数据。开发板列表来自 ~/.ssh/config 以及您手动添加的条目。</translation>
    </message>
    <message>
        <source>Add board…</source>
        <translation>添加开发板…</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Reload</source>
        <translation>重新加载</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Prompts (separate with |)</source>
        <translation>提示词（用 | 分隔）</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>词元数</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Window</source>
        <translation>时间窗口</translation>
    </message>
    <message>
        <source>30 s</source>
        <translation>30 秒</translation>
    </message>
    <message>
        <source>2 min</source>
        <translation>2 分钟</translation>
    </message>
    <message>
        <source>10 min</source>
        <translation>10 分钟</translation>
    </message>
    <message>
        <source>1 h</source>
        <translation>1 小时</translation>
    </message>
    <message>
        <source>All kept</source>
        <translation>全部保留数据</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <source>Export PNG…</source>
        <translation>导出 PNG…</translation>
    </message>
    <message>
        <source>Export PDF…</source>
        <translation>导出 PDF…</translation>
    </message>
    <message>
        <source>Not reported by this agent: %1</source>
        <translation>此代理未报告：%1</translation>
    </message>
    <message>
        <source>Per-token latency</source>
        <translation>逐词元延迟</translation>
    </message>
    <message>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <source>token</source>
        <translation>词元</translation>
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
        <translation>吞吐量</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>词元/秒</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>内存</translation>
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
        <translation>设备</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>%</source>
        <translation>%</translation>
    </message>
    <message>
        <source>hit rate</source>
        <translation>命中率</translation>
    </message>
    <message>
        <source>blocks in use</source>
        <translation>已用块</translation>
    </message>
    <message>
        <source>Profiled on %1: %2 prompt(s), %3 tokens; p50 %4 ms, p99 %5 ms, %6 tok/s, RSS max %7 MiB%8.</source>
        <translation>在 %1 上完成性能分析：%2 个提示词，%3 个词元；p50 %4 ms，p99 %5 ms，%6 词元/秒，RSS 峰值 %7 MiB%8。</translation>
    </message>
    <message>
        <source>none (e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu for an emulated board)</source>
        <translation>无（模拟开发板可用 qemu-aarch64 -L /usr/aarch64-linux-gnu）</translation>
    </message>
    <message>
        <source>Run the agent under</source>
        <translation>代理的启动前缀</translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation>对话模板</translation>
    </message>
    <message>
        <source>Send each prompt as a user message in the engine&apos;s own chat template (instruct models); generation stops at any end-of-turn token</source>
        <translation>把每条提示词作为用户消息，套用引擎自带的对话模板（指令模型）；生成在任一轮次结束符处停止</translation>
    </message>
    <message>
        <source>Save workload</source>
        <translation>保存负载</translation>
    </message>
    <message>
        <source>workload %1</source>
        <translation>负载 %1</translation>
    </message>
    <message>
        <source>Serving workload</source>
        <translation>服务负载</translation>
    </message>
    <message>
        <source>Workloads (*.workload);;All files (*)</source>
        <translation>负载 (*.workload);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Requests at once</source>
        <translation>同时处理的请求数</translation>
    </message>
    <message>
        <source>Cost model measured: %1 ms per token on %2 (%3)</source>
        <translation>成本模型已测量：在 %2 上每词元 %1 ms（%3）</translation>
    </message>
    <message>
        <source>%1: cannot read the workload file</source>
        <translation>%1：无法读取负载文件</translation>
    </message>
    <message>
        <source>%1: the workload file is empty</source>
        <translation>%1：负载文件为空</translation>
    </message>
    <message>
        <source>The prompts below (not saved)</source>
        <translation>下方的提示词（未保存）</translation>
    </message>
    <message>
        <source>%1 — serving %2 at concurrency %3</source>
        <translation>%1 — 以并发 %3 服务 %2</translation>
    </message>
    <message numerus="yes">
        <source>%1 — %n prompt(s)</source>
        <translation>
            <numerusform>%1 — %n 个提示词</numerusform>
        </translation>
    </message>
    <message>
        <source>Workload</source>
        <translation>负载</translation>
    </message>
    <message>
        <source>Save prompts as…</source>
        <translation>将提示词另存为…</translation>
    </message>
    <message>
        <source>Serving workload…</source>
        <translation>服务负载…</translation>
    </message>
    <message>
        <source>An edge-workload file (as serve-bench reads) replayed through the board&apos;s scheduler: requests arriving over time, at most N at once</source>
        <translation>通过开发板调度器重放的 edge-workload 文件（serve-bench 读取的格式）：请求随时间到达，最多同时处理 N 个</translation>
    </message>
    <message>
        <source>Measure cost model</source>
        <translation>测量成本模型</translation>
    </message>
    <message>
        <source>After deploying, the agent times every layer shape of the engine at FP32, FP16, INT8 and INT4 on the board (edge-agent --micro-profile): the board&apos;s cost model, which predicts each configuration&apos;s time per token and guides Autoplan</source>
        <translation>部署后，代理在开发板上以 FP32、FP16、INT8 和 INT4 对引擎的每种层形状计时（edge-agent --micro-profile）：即开发板的成本模型，用于预测每个配置的每词元时间并指导自动方案</translation>
    </message>
</context>
<context>
    <name>edge::views::ConfigurationModel</name>
    <message>
        <source>a plan has no &quot;layers&quot; array</source>
        <translation>方案缺少 &quot;layers&quot; 数组</translation>
    </message>
    <message>
        <source>plan entry %1 is malformed</source>
        <translation>方案第 %1 项格式错误</translation>
    </message>
    <message>
        <source>a configuration has no name or perplexity</source>
        <translation>配置缺少名称或困惑度</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 ms</translation>
    </message>
    <message>
        <source>pass</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>困惑度</translation>
    </message>
    <message>
        <source>Mean KL</source>
        <translation>平均 KL</translation>
    </message>
    <message>
        <source>Decode / token</source>
        <translation>每词元解码</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>验证</translation>
    </message>
    <message>
        <source>plan entry %1 (%2): group %3 is not a group size</source>
        <translation>方案条目 %1（%2）：分组 %3 不是有效的分组大小</translation>
    </message>
    <message>
        <source>plan entry %1 (%2): pruning %3 is not a ratio in [0, 1)</source>
        <translation>方案条目 %1（%2）：剪枝 %3 不是 [0, 1) 内的比例</translation>
    </message>
    <message>
        <source>configuration %1: &quot;%2&quot; is not a byte count</source>
        <translation>配置 %1：&quot;%2&quot; 不是字节数</translation>
    </message>
    <message>
        <source>configuration %1: engine %2: &quot;bytes&quot; is not a byte count</source>
        <translation>配置 %1：引擎 %2：&quot;bytes&quot; 不是字节数</translation>
    </message>
    <message>
        <source>configuration %1: calibration &quot;%2&quot; is not a count</source>
        <translation>配置 %1：校准 &quot;%2&quot; 不是计数</translation>
    </message>
    <message>
        <source>configuration %1: calibration selection &quot;%2&quot; is not all, random or kmeans</source>
        <translation>配置 %1：校准选择“%2”不是 all、random 或 kmeans</translation>
    </message>
    <message>
        <source>configuration %1: calibration &quot;seed&quot; is not a seed</source>
        <translation>配置 %1：校准的“seed”不是有效的种子</translation>
    </message>
    <message>
        <source>configuration %1: the predicted time on %2 is not a time</source>
        <translation>配置 %1：在 %2 上的预测时间不是有效的时间</translation>
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
        <translation>让神经网络在小型开发板上运行：检查模型，逐层选择精度与剪枝，编译，部署到 Jetson 并测量。</translation>
    </message>
    <message>
        <source>Open model…</source>
        <translation>打开模型…</translation>
    </message>
    <message>
        <source>Open Hugging Face folder…</source>
        <translation>打开 Hugging Face 文件夹…</translation>
    </message>
    <message>
        <source>Recent models</source>
        <translation>最近打开的模型</translation>
    </message>
    <message>
        <source>Models you open appear here. Double-click one to open it again.</source>
        <translation>打开过的模型会显示在这里。双击即可再次打开。</translation>
    </message>
    <message>
        <source>Double-click to open</source>
        <translation>双击打开</translation>
    </message>
    <message>
        <source>Formats</source>
        <translation>支持的格式</translation>
    </message>
    <message>
        <source>&lt;p&gt;&lt;b&gt;GGUF&lt;/b&gt; (.gguf): weights, config and tokenizer in one file.&lt;/p&gt;&lt;p&gt;&lt;b&gt;llama2.c&lt;/b&gt; (.bin) with its tokenizer (.bin).&lt;/p&gt;&lt;p&gt;&lt;b&gt;Hugging Face folder&lt;/b&gt;: *.safetensors, config.json, tokenizer.json.&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;GGUF&lt;/b&gt;（.gguf）：权重、配置和分词器都在一个文件中。&lt;/p&gt;&lt;p&gt;&lt;b&gt;llama2.c&lt;/b&gt;（.bin）及其分词器（.bin）。&lt;/p&gt;&lt;p&gt;&lt;b&gt;Hugging Face 文件夹&lt;/b&gt;：*.safetensors、config.json、tokenizer.json。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Workflow</source>
        <translation>工作流程</translation>
    </message>
    <message>
        <source>&lt;ol style=&quot;margin-left:-20px&quot;&gt;&lt;li&gt;Model: architecture, layers, sizes&lt;/li&gt;&lt;li&gt;Sensitivity and per-layer plan&lt;/li&gt;&lt;li&gt;Quantize, prune, calibrate, validate&lt;/li&gt;&lt;li&gt;Compile and deploy to the board&lt;/li&gt;&lt;li&gt;Compare configurations&lt;/li&gt;&lt;/ol&gt;</source>
        <translation>&lt;ol style=&quot;margin-left:-20px&quot;&gt;&lt;li&gt;模型：架构、层与大小&lt;/li&gt;&lt;li&gt;敏感度分析与逐层方案&lt;/li&gt;&lt;li&gt;量化、剪枝、校准、验证&lt;/li&gt;&lt;li&gt;编译并部署到开发板&lt;/li&gt;&lt;li&gt;比较不同配置&lt;/li&gt;&lt;/ol&gt;</translation>
    </message>
    <message>
        <source>No model loaded yet. Open one to see its architecture, layers and sizes.</source>
        <translation>尚未加载模型。打开一个模型即可查看其架构、各层与大小。</translation>
    </message>
    <message>
        <source>%1
%2 parameters  ·  %3 weights  ·  %4 layers in %5 blocks  ·  %6</source>
        <translation>%1
%2 参数  ·  %3 权重  ·  %5 个块共 %4 层  ·  %6</translation>
    </message>
    <message>
        <source>Current model</source>
        <translation>当前模型</translation>
    </message>
    <message>
        <source>Show model page</source>
        <translation>查看模型页</translation>
    </message>
</context>
<context>
    <name>edge::views::JobSlot</name>
    <message>
        <source>The engine did not give a reason.</source>
        <translation>引擎未给出原因。</translation>
    </message>
</context>
<context>
    <name>edge::views::LayerChart</name>
    <message>
        <source>Click a bar to select its layer</source>
        <translation>单击柱条即可选中对应的层</translation>
    </message>
    <message>
        <source>%1  ·  %2 parameters  ·  %3</source>
        <translation>%1  ·  %2 参数  ·  %3</translation>
    </message>
    <message>
        <source>Size per layer</source>
        <translation>各层大小</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>字节数</translation>
    </message>
    <message>
        <source>What the bars measure</source>
        <translation>柱条所表示的度量</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>Feed-forward</source>
        <translation>前馈网络</translation>
    </message>
    <message>
        <source>Embedding / output</source>
        <translation>嵌入 / 输出</translation>
    </message>
    <message>
        <source>Decoder block (bars in execution order)</source>
        <translation>解码器块（柱条按执行顺序排列）</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
</context>
<context>
    <name>edge::views::LayerPlanModel</name>
    <message>
        <source>No model is loaded</source>
        <translation>尚未加载模型</translation>
    </message>
    <message>
        <source>Row %1 is not a layer</source>
        <translation>第 %1 行不是一个层</translation>
    </message>
    <message numerus="yes">
        <source>Edit %n layer(s)</source>
        <translation>
            <numerusform>编辑 %n 个层</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not save the plan %1: %2</source>
        <translation>无法保存量化方案 %1：%2</translation>
    </message>
    <message>
        <source>Open plan %1</source>
        <translation>打开方案 %1</translation>
    </message>
    <message>
        <source>channel</source>
        <translation>按通道</translation>
    </message>
    <message>
        <source>sym</source>
        <translation>对称</translation>
    </message>
    <message>
        <source>asym</source>
        <translation>非对称</translation>
    </message>
    <message>
        <source>%1 bytes (FP32: %2 bytes)</source>
        <translation>%1 字节（FP32：%2 字节）</translation>
    </message>
    <message>
        <source>%1: unknown precision &quot;%2&quot;</source>
        <translation>%1：未知精度“%2”</translation>
    </message>
    <message>
        <source>%1: unknown method &quot;%2&quot;</source>
        <translation>%1：未知方法“%2”</translation>
    </message>
    <message>
        <source>%1: the group size must be a positive number</source>
        <translation>%1：分组大小必须是正数</translation>
    </message>
    <message>
        <source>%1: symmetric must be true or false</source>
        <translation>%1：对称设置必须为是或否</translation>
    </message>
    <message>
        <source>%1: the pruning ratio must be a number</source>
        <translation>%1：剪枝比例必须是数字</translation>
    </message>
    <message>
        <source>This column cannot be edited</source>
        <translation>此列不可编辑</translation>
    </message>
    <message>
        <source>%1: %2 takes no method, group size or symmetry</source>
        <translation>%1：%2 不使用方法、分组大小或对称设置</translation>
    </message>
    <message>
        <source>Set %1 of %2</source>
        <translation>设置 %2 的%1</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Method</source>
        <translation>方法</translation>
    </message>
    <message>
        <source>Group</source>
        <translation>分组</translation>
    </message>
    <message>
        <source>Symmetry</source>
        <translation>对称性</translation>
    </message>
    <message>
        <source>Pruning</source>
        <translation>剪枝</translation>
    </message>
    <message>
        <source>Est. size</source>
        <translation>预计大小</translation>
    </message>
    <message>
        <source>The model has no pruning group %1</source>
        <translation>模型中没有剪枝组 %1</translation>
    </message>
    <message>
        <source>Pruning from the Pruning page</source>
        <translation>来自剪枝页面的剪枝</translation>
    </message>
    <message>
        <source>The plan has %1 layers; the open model %2</source>
        <translation>方案有 %1 层；打开的模型有 %2 层</translation>
    </message>
</context>
<context>
    <name>edge::views::LayerTreeModel</name>
    <message>
        <source>Block %1</source>
        <translation>第 %1 块</translation>
    </message>
    <message>
        <source>decoder block</source>
        <translation>解码器块</translation>
    </message>
    <message numerus="yes">
        <source>%n layer(s)</source>
        <translation>
            <numerusform>%n 层</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 (from %2)</source>
        <translation>%1（原为 %2）</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>字节数</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
</context>
<context>
    <name>edge::views::LayersPage</name>
    <message numerus="yes">
        <source>Set %n layer(s) to %1</source>
        <translation>
            <numerusform>将 %n 个层设为 %1</numerusform>
        </translation>
    </message>
    <message>
        <source>Open plan</source>
        <translation>打开方案</translation>
    </message>
    <message>
        <source>Quantization plans (*.plan.json *.json)</source>
        <translation>量化方案 (*.plan.json *.json)</translation>
    </message>
    <message>
        <source>Save plan</source>
        <translation>保存方案</translation>
    </message>
    <message>
        <source>Quantization plans (*.plan.json)</source>
        <translation>量化方案 (*.plan.json)</translation>
    </message>
    <message>
        <source>All kinds</source>
        <translation>全部类别</translation>
    </message>
    <message>
        <source>All blocks</source>
        <translation>全部块</translation>
    </message>
    <message>
        <source>Outside blocks</source>
        <translation>块外的层</translation>
    </message>
    <message>
        <source>Block %1</source>
        <translation>第 %1 块</translation>
    </message>
    <message numerus="yes">
        <source>%n selected layer(s):</source>
        <translation>
            <numerusform>已选 %n 个层：</numerusform>
        </translation>
    </message>
    <message>
        <source>Select layers to edit them together:</source>
        <translation>选择多个层以批量编辑：</translation>
    </message>
    <message>
        <source>%1 of %2 (%3 %)</source>
        <translation>%1 / %2（%3 %）</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1 字节</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>逐层量化</translation>
    </message>
    <message>
        <source>Choose the precision, method and group size of each layer: double-click a cell, or select several rows and set them together.</source>
        <translation>为每一层选择精度、方法和分组大小：双击单元格编辑，或选中多行后统一设置。</translation>
    </message>
    <message>
        <source>Open a model to plan how each of its layers is quantized.</source>
        <translation>打开模型后即可规划每一层的量化方式。</translation>
    </message>
    <message>
        <source>Filter by layer or kind…</source>
        <translation>按层名或类别筛选…</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>Redo</source>
        <translation>重做</translation>
    </message>
    <message>
        <source>Open plan…</source>
        <translation>打开方案…</translation>
    </message>
    <message>
        <source>Save plan…</source>
        <translation>保存方案…</translation>
    </message>
    <message>
        <source>channel</source>
        <translation>按通道</translation>
    </message>
    <message>
        <source>Apply to selected</source>
        <translation>应用到所选层</translation>
    </message>
    <message>
        <source>Estimated size:</source>
        <translation>预计大小：</translation>
    </message>
    <message>
        <source>Average bits per weight:</source>
        <translation>平均每权重位数：</translation>
    </message>
    <message>
        <source>Autoplan for a board…</source>
        <translation>为开发板自动生成方案…</translation>
    </message>
    <message>
        <source>FP16 / INT8 / INT4 per layer: the least quality loss (the Sensitivity page&apos;s measurements) within a time per token on a board (its measured cost model)</source>
        <translation>逐层选择 FP16 / INT8 / INT4：在开发板的每词元时间预算内（依据其测得的成本模型）使质量损失最小（依据“敏感度”页面的测量）</translation>
    </message>
</context>
<context>
    <name>edge::views::ModelDocument</name>
    <message>
        <source>Could not open “%1”.</source>
        <translation>无法打开“%1”。</translation>
    </message>
</context>
<context>
    <name>edge::views::ModelPage</name>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Nothing loaded yet</source>
        <translation>尚未加载任何内容</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>Loading %1: %2</source>
        <translation>正在加载 %1：%2</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>尚未加载模型</translation>
    </message>
    <message>
        <source>Open a GGUF file, a llama2.c checkpoint (.bin) or a Hugging Face folder (safetensors + config.json + tokenizer.json) to see its architecture and layers.</source>
        <translation>打开 GGUF 文件、llama2.c 检查点（.bin）或 Hugging Face 文件夹（safetensors + config.json + tokenizer.json），查看其架构与各层。</translation>
    </message>
    <message>
        <source>Open model…</source>
        <translation>打开模型…</translation>
    </message>
    <message>
        <source>Open folder…</source>
        <translation>打开文件夹…</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层</translation>
    </message>
    <message>
        <source>%1  ·  %2 format  ·  %3</source>
        <translation>%1  ·  %2 格式  ·  %3</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>概要</translation>
    </message>
</context>
<context>
    <name>edge::views::OpenModel</name>
    <message>
        <source>Choose the tokenizer for %1</source>
        <translation>为 %1 选择分词器</translation>
    </message>
    <message>
        <source>llama2.c tokenizer (*.bin);;All files (*)</source>
        <translation>llama2.c 分词器 (*.bin);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Models (*.gguf *.bin *.safetensors *.onnx *.pt)</source>
        <translation>模型 (*.gguf *.bin *.safetensors *.onnx *.pt)</translation>
    </message>
    <message>
        <source>GGUF (*.gguf)</source>
        <translation>GGUF (*.gguf)</translation>
    </message>
    <message>
        <source>llama2.c checkpoint (*.bin)</source>
        <translation>llama2.c 检查点 (*.bin)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>所有文件 (*)</translation>
    </message>
    <message>
        <source>Open model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <source>Open a Hugging Face model folder (safetensors + config.json + tokenizer.json)</source>
        <translation>打开 Hugging Face 模型文件夹（safetensors + config.json + tokenizer.json）</translation>
    </message>
</context>
<context>
    <name>edge::views::ParetoPage</name>
    <message numerus="yes">
        <source>%1 vs %2: %n layer(s) differ</source>
        <translation>
            <numerusform>%1 与 %2：%n 个层不同</numerusform>
        </translation>
    </message>
    <message>
        <source>Select two configurations to compare their plans</source>
        <translation>选择两个配置以比较其方案</translation>
    </message>
    <message>
        <source>Hover a point for details; click it to open its plan</source>
        <translation>悬停查看详情；单击打开其方案</translation>
    </message>
    <message>
        <source>%1 · perplexity %2 (FP32 %3) · KL %4 · %5 ms/token · %6 · %7</source>
        <translation>%1 · 困惑度 %2（FP32 %3）· KL %4 · %5 ms/词元 · %6 · %7</translation>
    </message>
    <message>
        <source>passed</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>Pareto frontier</source>
        <translation>帕累托前沿</translation>
    </message>
    <message>
        <source>Pareto</source>
        <translation>帕累托</translation>
    </message>
    <message>
        <source>Cost axis</source>
        <translation>代价轴</translation>
    </message>
    <message>
        <source>Decode latency (ms / token)</source>
        <translation>解码延迟（ms/词元）</translation>
    </message>
    <message>
        <source>Weight size (KiB)</source>
        <translation>权重大小（KiB）</translation>
    </message>
    <message>
        <source>Weights, KiB</source>
        <translation>权重，KiB</translation>
    </message>
    <message>
        <source>Perplexity (quantized)</source>
        <translation>困惑度（量化后）</translation>
    </message>
    <message>
        <source>Open in Layers</source>
        <translation>在“层”中打开</translation>
    </message>
    <message>
        <source>No configuration yet: run a validation — each run adds a point here.</source>
        <translation>尚无配置：运行一次验证——每次运行都会在此添加一个点。</translation>
    </message>
    <message>
        <source>failed: %1</source>
        <translation>未通过：%1</translation>
    </message>
    <message>
        <source>Compile cancelled</source>
        <translation>编译已取消</translation>
    </message>
    <message>
        <source>Open the configuration&apos;s model first.</source>
        <translation>请先打开该配置所用的模型。</translation>
    </message>
    <message>
        <source>%1 was validated on another model: open that model to compile it.</source>
        <translation>%1 是在另一个模型上验证的：请打开该模型后再编译。</translation>
    </message>
    <message>
        <source>Cannot create the engine folder %1</source>
        <translation>无法创建引擎文件夹 %1</translation>
    </message>
    <message>
        <source>Compiling %1 for %2…</source>
        <translation>正在为 %2 编译 %1…</translation>
    </message>
    <message>
        <source>Compiling %1 failed.</source>
        <translation>编译 %1 失败。</translation>
    </message>
    <message>
        <source>%1: %2 (%3), SHA-256 %4…</source>
        <translation>%1：%2（%3），SHA-256 %4…</translation>
    </message>
    <message>
        <source>%1 on %2 · perplexity %3 · TPOT p50 %4 ms, p99 %5 ms · TTFT %6 ms · %7 tokens/s · peak %8 MiB</source>
        <translation>%1 在 %2 上 · 困惑度 %3 · 每词元 p50 %4 ms，p99 %5 ms · 首词元 %6 ms · %7 词元/秒 · 峰值 %8 MiB</translation>
    </message>
    <message>
        <source>Board time per token (ms, p50)</source>
        <translation>开发板每词元时间（ms，p50）</translation>
    </message>
    <message>
        <source>Decode latency on this host, ms per token (mean)</source>
        <translation>本机解码延迟，每词元 ms（均值）</translation>
    </message>
    <message>
        <source>Time per output token on the board, ms (p50)</source>
        <translation>开发板上每个输出词元的时间，ms（p50）</translation>
    </message>
    <message>
        <source>Compile engine</source>
        <translation>编译引擎</translation>
    </message>
    <message>
        <source>Quantize the selected configuration&apos;s plan (calibrated as it was validated) and compile it into a .edge engine for the chosen target</source>
        <translation>按所选配置的方案量化（校准方式与验证时相同），并为所选目标编译为 .edge 引擎</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>No configuration measured on a board yet: compile one, deploy it on the Boards page and profile it.</source>
        <translation>尚无在开发板上测量过的配置：请先编译一个配置，在“开发板”页面部署并进行性能分析。</translation>
    </message>
    <message>
        <source> · predicted %1 ms (measured %2%3 %)</source>
        <translation> · 预测 %1 ms（实测 %2%3 %）</translation>
    </message>
    <message>
        <source> · workload %1</source>
        <translation> · 负载 %1</translation>
    </message>
    <message>
        <source>%1 · perplexity %2 · predicted %3 ms per token on %4 (its cost model); not measured there yet: compile, deploy and profile it</source>
        <translation>%1 · 困惑度 %2 · 预计在 %4 上每词元 %3 ms（依据其成本模型）；尚未在该开发板上测量：请编译、部署并进行性能分析</translation>
    </message>
    <message>
        <source>%1 · %2 (predicted)</source>
        <translation>%1 · %2（预测）</translation>
    </message>
    <message>
        <source>Board time to first token (ms)</source>
        <translation>开发板首词元时间（ms）</translation>
    </message>
    <message>
        <source>Board tokens/s (higher is better)</source>
        <translation>开发板词元/秒（越高越好）</translation>
    </message>
    <message>
        <source>Board peak memory (MiB)</source>
        <translation>开发板峰值内存（MiB）</translation>
    </message>
    <message>
        <source>Quality axis</source>
        <translation>质量轴</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>困惑度</translation>
    </message>
    <message>
        <source>Mean KL divergence</source>
        <translation>平均 KL 散度</translation>
    </message>
    <message>
        <source>Top-1 agreement (%, higher is better)</source>
        <translation>Top-1 一致率（%，越高越好）</translation>
    </message>
    <message>
        <source>Time to first token on the board, ms</source>
        <translation>开发板上的首词元时间，ms</translation>
    </message>
    <message>
        <source>Tokens per second on the board</source>
        <translation>开发板上每秒词元数</translation>
    </message>
    <message>
        <source>Peak memory on the board (agent RSS), MiB</source>
        <translation>开发板上的峰值内存（代理 RSS），MiB</translation>
    </message>
    <message>
        <source>Mean KL divergence from FP32</source>
        <translation>与 FP32 的平均 KL 散度</translation>
    </message>
    <message>
        <source>Top-1 agreement with FP32, %</source>
        <translation>与 FP32 的 Top-1 一致率，%</translation>
    </message>
    <message>
        <source>Each validated configuration is a point: better quality and lower cost (more tokens/s) win; the point&apos;s size and colour grow with its weights (green small, red large). The dashed line is the frontier no other configuration beats on both. On a board&apos;s time per token, hollow markers are the times its cost model predicts.</source>
        <translation>每个已验证的配置是一个点：质量更好、成本更低（每秒词元更多）者胜出；点的大小和颜色随权重增大（绿色小，红色大）。虚线是没有其他配置能在两方面都胜过的前沿。在开发板每词元时间轴上，空心标记是其成本模型预测的时间。</translation>
    </message>
</context>
<context>
    <name>edge::views::PlanDiffModel</name>
    <message>
        <source>Layer</source>
        <translation>层</translation>
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
        <translation>困惑度</translation>
    </message>
    <message>
        <source>mean KL</source>
        <translation>平均 KL</translation>
    </message>
    <message>
        <source>top-1 agreement</source>
        <translation>top-1 一致率</translation>
    </message>
    <message>
        <source>weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>host ms/token</source>
        <translation>主机 ms/词元</translation>
    </message>
    <message>
        <source>calibration</source>
        <translation>校准</translation>
    </message>
    <message>
        <source>%1: TPOT p50, ms</source>
        <translation>%1：TPOT p50，ms</translation>
    </message>
    <message>
        <source>%1: predicted TPOT, ms</source>
        <translation>%1：预测 TPOT，ms</translation>
    </message>
    <message>
        <source>%1: TTFT, ms</source>
        <translation>%1：TTFT，ms</translation>
    </message>
    <message>
        <source>%1: tokens/s</source>
        <translation>%1：词元/秒</translation>
    </message>
    <message>
        <source>%1: peak memory, MiB</source>
        <translation>%1：峰值内存，MiB</translation>
    </message>
</context>
<context>
    <name>edge::views::PruningModel</name>
    <message>
        <source>pinned</source>
        <translation>已固定</translation>
    </message>
    <message>
        <source>Group</source>
        <translation>剪枝组</translation>
    </message>
    <message>
        <source>Units</source>
        <translation>单元类型</translation>
    </message>
    <message>
        <source>Count</source>
        <translation>数量</translation>
    </message>
    <message>
        <source>Kept</source>
        <translation>保留</translation>
    </message>
    <message>
        <source>Pruned</source>
        <translation>剪除比例</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
</context>
<context>
    <name>edge::views::PruningPage</name>
    <message>
        <source>This pruning cannot be applied.</source>
        <translation>无法应用此剪枝设置。</translation>
    </message>
    <message>
        <source>Planning…</source>
        <translation>正在规划…</translation>
    </message>
    <message>
        <source>Open a model to see its prune groups.</source>
        <translation>打开模型以查看其剪枝组。</translation>
    </message>
    <message>
        <source>Parameters %1 → %2 (%3 % removed)</source>
        <translation>参数量 %1 → %2（移除 %3 %）</translation>
    </message>
    <message>
        <source>Nodes before: %1</source>
        <translation>剪枝前节点：%1</translation>
    </message>
    <message>
        <source>Nodes after:  %1</source>
        <translation>剪枝后节点：%1</translation>
    </message>
    <message>
        <source>Shape %1 → %2</source>
        <translation>形状 %1 → %2</translation>
    </message>
    <message>
        <source>%1 is pinned: %2</source>
        <translation>%1 已固定：%2</translation>
    </message>
    <message>
        <source>%1: keeps %2 of %3 %4: %5</source>
        <translation>%1：保留 %2/%3 个%4：%5</translation>
    </message>
    <message>
        <source>removes: %1</source>
        <translation>移除：%1</translation>
    </message>
    <message>
        <source>query heads kept: %1</source>
        <translation>保留的查询头：%1</translation>
    </message>
    <message>
        <source>Pruning</source>
        <translation>剪枝</translation>
    </message>
    <message>
        <source>Structured pruning removes whole units: KV heads (with their query group) and MLP channels of an LLM block, output channels of a CNN convolution. Units with the smallest weight magnitude go first. Double-click a ratio to edit one group.</source>
        <translation>结构化剪枝按整个单元移除：LLM 块中的 KV 头（连同其查询头组）和 MLP 通道，CNN 卷积的输出通道。权重幅值最小的单元最先移除。双击比例可单独编辑某一组。</translation>
    </message>
    <message>
        <source>Ratio for every group</source>
        <translation>所有组的剪枝比例</translation>
    </message>
    <message>
        <source>KV heads</source>
        <translation>KV 头</translation>
    </message>
    <message>
        <source>MLP channels</source>
        <translation>MLP 通道</translation>
    </message>
    <message>
        <source>Reset edited ratios</source>
        <translation>重置已编辑的比例</translation>
    </message>
    <message>
        <source>Units of each group: kept (blue), removed (red), pinned (grey)</source>
        <translation>各组单元：保留（蓝）、移除（红）、固定（灰）</translation>
    </message>
    <message>
        <source>Use in the plan</source>
        <translation>用于方案</translation>
    </message>
    <message>
        <source>Put these ratios into the Layers plan: validation, compile and deploy then prune the model first</source>
        <translation>把这些比例写入层方案：验证、编译和部署将先对模型剪枝</translation>
    </message>
</context>
<context>
    <name>edge::views::SensitivityModel</name>
    <message>
        <source>Sensitivity: no model is open</source>
        <translation>敏感度：未打开模型</translation>
    </message>
    <message>
        <source>Sensitivity: cannot read the evaluation text %1</source>
        <translation>敏感度：无法读取评估文本 %1</translation>
    </message>
    <message>
        <source>%1: not a JSON object (%2)</source>
        <translation>%1：不是 JSON 对象（%2）</translation>
    </message>
    <message>
        <source>%1: no &quot;layers&quot; array or object</source>
        <translation>%1：缺少 &quot;layers&quot; 数组或对象</translation>
    </message>
    <message>
        <source>%1: layer &apos;%2&apos; is not in the open model</source>
        <translation>%1：打开的模型中没有层“%2”</translation>
    </message>
    <message>
        <source>%1: no numeric per-layer values</source>
        <translation>%1：没有逐层数值</translation>
    </message>
    <message>
        <source>INT4 KL, mean</source>
        <translation>INT4 KL，平均</translation>
    </message>
    <message>
        <source>INT4 KL, max</source>
        <translation>INT4 KL，最大</translation>
    </message>
    <message>
        <source>INT4 ΔNLL</source>
        <translation>INT4 ΔNLL</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
</context>
<context>
    <name>edge::views::SensitivityPage</name>
    <message>
        <source>Load analysis</source>
        <translation>加载分析</translation>
    </message>
    <message>
        <source>Analysis JSON (*.json);;All files (*)</source>
        <translation>分析 JSON (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Open a model first.</source>
        <translation>请先打开模型。</translation>
    </message>
    <message>
        <source>Quantizing each layer alone…</source>
        <translation>正在逐层单独量化…</translation>
    </message>
    <message>
        <source>Sensitivity analysis failed</source>
        <translation>敏感度分析失败</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>Cannot read %1</source>
        <translation>无法读取 %1</translation>
    </message>
    <message>
        <source>blk %1</source>
        <translation>块 %1</translation>
    </message>
    <message>
        <source>Layer (execution order)</source>
        <translation>层（执行顺序）</translation>
    </message>
    <message>
        <source>Hessian eigenvalue spectrum of %1</source>
        <translation>%1 的 Hessian 特征值谱</translation>
    </message>
    <message>
        <source>Click a bar to select its layer in the Layers table</source>
        <translation>单击柱条可在“层”表中选中该层</translation>
    </message>
    <message>
        <source>Sensitivity</source>
        <translation>敏感度</translation>
    </message>
    <message>
        <source>How much each layer hurts when it alone is quantized to INT4 (RTN, group 32): the KL divergence from the FP32 model and the change in next-token loss on the evaluation text. Analysis files add Hessian and gradient metrics.</source>
        <translation>仅将某一层量化为 INT4（RTN，分组 32）时该层造成的损失：在评估文本上与 FP32 模型的 KL 散度及下一词元损失的变化。分析文件可添加 Hessian 和梯度指标。</translation>
    </message>
    <message>
        <source>Evaluation text</source>
        <translation>评估文本</translation>
    </message>
    <message>
        <source>Analyse</source>
        <translation>分析</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Load analysis JSON…</source>
        <translation>加载分析 JSON…</translation>
    </message>
    <message>
        <source>Metric</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>Layer × metric (each metric scaled to its maximum)</source>
        <translation>层 × 指标（各指标按其最大值归一化）</translation>
    </message>
    <message>
        <source>No sensitivity yet: press Analyse.</source>
        <translation>尚无敏感度数据：请点击“分析”。</translation>
    </message>
    <message>
        <source>Layers by sensitivity (an analysis file adds eigenvalue spectra)</source>
        <translation>按敏感度排列的层（分析文件可添加特征值谱）</translation>
    </message>
</context>
<context>
    <name>edge::views::SummaryModel</name>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Source format</source>
        <translation>源格式</translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation>架构</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Weight memory</source>
        <translation>权重内存</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Tensors</source>
        <translation>张量数</translation>
    </message>
    <message>
        <source>Embedding width</source>
        <translation>嵌入宽度</translation>
    </message>
    <message>
        <source>FFN width</source>
        <translation>FFN 宽度</translation>
    </message>
    <message>
        <source>Decoder blocks</source>
        <translation>解码器块数</translation>
    </message>
    <message>
        <source>Attention heads</source>
        <translation>注意力头数</translation>
    </message>
    <message>
        <source>KV heads</source>
        <translation>KV 头数</translation>
    </message>
    <message>
        <source>Head dimension</source>
        <translation>头维度</translation>
    </message>
    <message>
        <source>Vocabulary</source>
        <translation>词表大小</translation>
    </message>
    <message>
        <source>Context length</source>
        <translation>上下文长度</translation>
    </message>
    <message>
        <source>RoPE dimensions</source>
        <translation>RoPE 维度</translation>
    </message>
    <message>
        <source>RoPE θ</source>
        <translation>RoPE θ</translation>
    </message>
    <message>
        <source>Norm ε</source>
        <translation>归一化 ε</translation>
    </message>
    <message>
        <source>Tied embeddings</source>
        <translation>共享嵌入权重</translation>
    </message>
    <message>
        <source>Tokenizer</source>
        <translation>分词器</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>none (the file carries no tokenizer)</source>
        <translation>无（文件中不含分词器）</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>词元数</translation>
    </message>
    <message>
        <source>Merges</source>
        <translation>合并规则</translation>
    </message>
    <message>
        <source>BOS / EOS</source>
        <translation>BOS / EOS</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>File metadata</source>
        <translation>文件元数据</translation>
    </message>
    <message>
        <source>%1 more entries</source>
        <translation>另有 %1 项</translation>
    </message>
    <message>
        <source>Property</source>
        <translation>属性</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>%1 in the file, read when a job needs it</source>
        <translation>%1 位于文件中，任务需要时才读取</translation>
    </message>
    <message>
        <source>RoPE scaling</source>
        <translation>RoPE 缩放</translation>
    </message>
    <message>
        <source>Q/K/V biases</source>
        <translation>Q/K/V 偏置</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
</context>
<context>
    <name>edge::views::TelemetryChart</name>
    <message>
        <source>time (s)</source>
        <translation>时间（秒）</translation>
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
        <translation>无法写入 %1：%2</translation>
    </message>
</context>
<context>
    <name>edge::views::ValidationLayerModel</name>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Activations checked</source>
        <translation>已检查激活值</translation>
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
        <translation>最小缩放因子</translation>
    </message>
    <message>
        <source>Largest scale</source>
        <translation>最大缩放因子</translation>
    </message>
    <message>
        <source>Scale range</source>
        <translation>缩放范围</translation>
    </message>
</context>
<context>
    <name>edge::views::ValidationPage</name>
    <message>
        <source>Evaluation text</source>
        <translation>评估文本</translation>
    </message>
    <message>
        <source>Text (*.txt);;All files (*)</source>
        <translation>文本 (*.txt);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Open a model first.</source>
        <translation>请先打开模型。</translation>
    </message>
    <message>
        <source>Quantizing…</source>
        <translation>正在量化…</translation>
    </message>
    <message>
        <source>Validation failed</source>
        <translation>验证失败</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>No validation run yet: set a plan on the Layers page, then Run.</source>
        <translation>尚未运行验证：请在“层”页面设置方案，然后运行。</translation>
    </message>
    <message>
        <source>Passed: every check is within its threshold.</source>
        <translation>通过：所有检查均在阈值之内。</translation>
    </message>
    <message>
        <source>Failed: %1</source>
        <translation>未通过：%1</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>验证</translation>
    </message>
    <message>
        <source>The open model quantized with the Layers page&apos;s plan, checked against the FP32 model: perplexity, KL divergence, top-1 agreement, numeric health, bit-flip fault injection and decode jitter. Double-click a threshold to change it.</source>
        <translation>用“层”页面的方案量化当前模型，并与 FP32 模型对照检查：困惑度、KL 散度、top-1 一致率、数值健康、比特翻转故障注入和解码抖动。双击阈值即可修改。</translation>
    </message>
    <message>
        <source>A text file the model should predict well</source>
        <translation>模型应能良好预测的文本文件</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Split into</source>
        <translation>切分为</translation>
    </message>
    <message>
        <source>stories (&lt;|endoftext|&gt;)</source>
        <translation>故事（&lt;|endoftext|&gt;）</translation>
    </message>
    <message>
        <source>paragraphs (blank lines)</source>
        <translation>段落（空行）</translation>
    </message>
    <message>
        <source>Parts scored</source>
        <translation>评分段数</translation>
    </message>
    <message>
        <source>Bit-flip injection (1 % of codes)</source>
        <translation>比特翻转注入（1 % 的编码）</translation>
    </message>
    <message>
        <source>Run validation</source>
        <translation>运行验证</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Per layer: input activations checked for NaN / Inf, and the quantized scales&apos; range</source>
        <translation>逐层：输入激活值的 NaN / Inf 检查，以及量化缩放因子的范围</translation>
    </message>
    <message>
        <source>Calibration text</source>
        <translation>校准文本</translation>
    </message>
    <message>
        <source>Calibrated on %1</source>
        <translation>校准数据：%1</translation>
    </message>
    <message>
        <source>AWQ/GPTQ: empty = the evaluation text without the parts it scores</source>
        <translation>AWQ/GPTQ：留空 = 使用评估文本中不参与评分的部分</translation>
    </message>
    <message>
        <source>Calibrate on</source>
        <translation>校准数据</translation>
    </message>
    <message>
        <source>every paragraph, in order</source>
        <translation>全部段落（按顺序）</translation>
    </message>
    <message>
        <source>k-means representatives</source>
        <translation>k-means 代表样本</translation>
    </message>
    <message>
        <source>a random draw</source>
        <translation>随机抽取</translation>
    </message>
    <message>
        <source>k-means: the paragraphs nearest the centres of clusters of the model&apos;s own embeddings (what calib-select does); random: a seeded uniform draw. Either chooses among the paragraphs left after those the evaluation scores are removed.</source>
        <translation>k-means：模型自身嵌入聚类中距各簇中心最近的段落（与 calib-select 相同）；随机：带种子的均匀抽取。两者都只在移除评估所用段落后剩下的段落中选择。</translation>
    </message>
    <message>
        <source>paragraphs</source>
        <translation>个段落</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>种子</translation>
    </message>
    <message>
        <source>  sequences</source>
        <translation>  序列数</translation>
    </message>
    <message>
        <source>× tokens</source>
        <translation>× 词元数</translation>
    </message>
</context>
<context>
    <name>edge::views::ValidationReportModel</name>
    <message>
        <source>Perplexity (FP32 → quantized)</source>
        <translation>困惑度（FP32 → 量化后）</translation>
    </message>
    <message>
        <source>Mean KL divergence</source>
        <translation>平均 KL 散度</translation>
    </message>
    <message>
        <source>KL divergence, p99</source>
        <translation>KL 散度，p99</translation>
    </message>
    <message>
        <source>Top-1 agreement</source>
        <translation>Top-1 一致率</translation>
    </message>
    <message>
        <source>Numeric health (NaN / Inf)</source>
        <translation>数值健康（NaN / Inf）</translation>
    </message>
    <message>
        <source>Scale dynamic range</source>
        <translation>缩放因子动态范围</translation>
    </message>
    <message>
        <source>Bit flips: top-1 confidence drop</source>
        <translation>比特翻转：top-1 置信度下降</translation>
    </message>
    <message>
        <source>Decode jitter (p99 − p50)</source>
        <translation>解码抖动（p99 − p50）</translation>
    </message>
    <message>
        <source>%1 → %2 (%3 tokens)</source>
        <translation>%1 → %2（%3 个词元）</translation>
    </message>
    <message>
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <source>%1 non-finite of %2 activations in %3 layers</source>
        <translation>%3 层的 %2 个激活值中有 %1 个非有限值</translation>
    </message>
    <message>
        <source>no quantized scales</source>
        <translation>无量化缩放因子</translation>
    </message>
    <message>
        <source>max %1 over %2 tensors</source>
        <translation>%2 个张量中最大 %1</translation>
    </message>
    <message>
        <source>not run</source>
        <translation>未运行</translation>
    </message>
    <message>
        <source>%1 % (%2 codes flipped, top-1 agreement %3 %)</source>
        <translation>%1 %（翻转 %2 个编码，top-1 一致率 %3 %）</translation>
    </message>
    <message>
        <source>%1 ms (p50 %2 ms, p99 %3 ms, %4 tokens/s)</source>
        <translation>%1 ms（p50 %2 ms，p99 %3 ms，%4 词元/秒）</translation>
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
        <translation>通过</translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>info</source>
        <translation>信息</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>检查项</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>测量值</translation>
    </message>
    <message>
        <source>Threshold</source>
        <translation>阈值</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
</context>
<context>
    <name>edge::views::WorkloadListModel</name>
    <message>
        <source>a workload needs a name</source>
        <translation>负载需要一个名称</translation>
    </message>
    <message>
        <source>workload %1: the serving workload has no request</source>
        <translation>负载 %1：服务负载中没有请求</translation>
    </message>
    <message>
        <source>workload %1: concurrency %2 is not a count of requests</source>
        <translation>负载 %1：并发数 %2 不是有效的请求数</translation>
    </message>
    <message>
        <source>workload %1 has no prompt</source>
        <translation>负载 %1 没有提示词</translation>
    </message>
    <message>
        <source>workload %1: %2 is not a count of tokens</source>
        <translation>负载 %1：%2 不是有效的词元数</translation>
    </message>
    <message>
        <source>Serving workload %1 at concurrency %2</source>
        <translation>以并发 %2 运行服务负载 %1</translation>
    </message>
    <message numerus="yes">
        <source>%n prompt(s), %1 tokens each</source>
        <translation>
            <numerusform>%n 个提示词，每个 %1 个词元</numerusform>
        </translation>
    </message>
</context>
</TS>
