<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>ConsoleCommandLine</name>
    <message>
        <location filename="../../ui/main.cpp" line="+34"/>
        <source>Operations console for payment-callback incidents.</source>
        <translation>支付回调事故的运维控制台。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Connect to this database and skip the connection dialog.</source>
        <translation>连接到此数据库，跳过连接对话框。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Read the pages from this database, usually a replica of --db; actions still run on --db. Default: PAYOPS_READ_DB, with PAYOPS_READ_DB_PASSWORD.</source>
        <translation>从此数据库读取各页面，通常是 --db 的副本（从库）；操作仍在 --db 上执行。默认：PAYOPS_READ_DB，密码取自 PAYOPS_READ_DB_PASSWORD。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Read the team&apos;s own tables of that database, as this TOML mapping file describes them (docs/mapping.md). Default: PAYOPS_MAPPING.</source>
        <translation>读取该数据库中团队自己的表，其位置由此映射文件（TOML格式）描述。默认：PAYOPS_MAPPING。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>trace, debug, info, warn, error or off.</source>
        <translation>trace、debug、info、warn、error 或 off。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Start the local sandbox and connect to it.</source>
        <translation>启动本地沙箱并连接到它。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open this page: %1.</source>
        <translation>打开此页面：%1。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Open the evidence of this order.</source>
        <translation>打开此订单的证据。</translation>
    </message>
    <message>
        <location line="+48"/>
        <source>payops console</source>
        <translation>payops 控制台</translation>
    </message>
    <message>
        <location line="+53"/>
        <source>unknown page; one of: %1</source>
        <translation>未知页面；可选：%1</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Local sandbox started.</source>
        <translation>本地沙箱已启动。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Starting the local sandbox …</source>
        <translation>正在启动本地沙箱…</translation>
    </message>
</context>
<context>
    <name>Mapping</name>
    <message>
        <location filename="../../app/domain/mapping/mapping.cpp" line="+141"/>
        <source>[%1] is missing</source>
        <translation>缺少 [%1]</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&apos;%1&apos; must be a table</source>
        <translation>&apos;%1&apos; 必须是一个表</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../../ui/dialogs/switchdialog.cpp" line="+20"/>
        <source>Every callback instance stops processing payment callbacks. Each callback is only recorded, with its raw body, and answered 200 so that the platform stops retrying. No order is marked paid and no coupon or points are issued until the backlog is processed. Callbacks already being processed finish first: the flip waits for them.</source>
        <translation>所有回调实例停止处理支付回调。每条回调只连同原始报文记录下来，并应答 200，让平台不再重试。积压回调处理之前，不会有订单被标记为已支付，也不会发放优惠券或积分。正在处理的回调会先处理完：切换开关会等它们结束。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Every callback instance processes payment callbacks again: orders are marked paid, coupons and points are issued. The callbacks recorded meanwhile stay in the backlog until someone processes them (Backlog page).</source>
        <translation>所有回调实例恢复处理支付回调：订单会被标记为已支付，优惠券和积分照常发放。期间已记录的回调留在积压回调中，直到有人处理（见“积压回调”页）。</translation>
    </message>
</context>
<context>
    <name>payops::AuditLog</name>
    <message>
        <location filename="../../app/domain/money/auditlog.cpp" line="+83"/>
        <source>the chain head is missing (ops_audit_head has no row)</source>
        <translation>链头缺失（ops_audit_head 没有数据行）</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>entry %1 is missing (the next entry is %2)</source>
        <translation>记录 %1 缺失（下一条是 %2）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>entry %1 does not match its hash (edited after it was written)</source>
        <translation>记录 %1 与其哈希不一致（写入后被改过）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>entry %1 does not link to entry %2&apos;s hash</source>
        <translation>记录 %1 没有链接到记录 %2 的哈希</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>the chain head names entry %1 but the log ends at entry %2 (entries removed from the end?)</source>
        <translation>链头指向记录 %1，但日志止于记录 %2（末尾的记录被删了？）</translation>
    </message>
</context>
<context>
    <name>payops::AuditModel</name>
    <message>
        <location filename="../../ui/models/auditmodel.cpp" line="+70"/>
        <source>Entry</source>
        <translation>条目</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>At (UTC)</source>
        <translation>时间（UTC）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Who (database account)</source>
        <translation>操作人（数据库账号）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Target</source>
        <translation>对象</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Ticket</source>
        <translation>工单</translation>
    </message>
</context>
<context>
    <name>payops::AuditPage</name>
    <message>
        <location filename="../../ui/pages/auditpage.cpp" line="+75"/>
        <source>anyone</source>
        <translation>任何人</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>any action</source>
        <translation>任意操作</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>From</source>
        <translation>从</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>to</source>
        <translation>至</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Show</source>
        <translation>查询</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Who</source>
        <translation>操作人</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>UTC</source>
        <translation>UTC</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Verify the chain</source>
        <translation>校验审计链</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Walks every entry, as payops audit verify does: no id missing, each hash over the previous one and the entry&apos;s content.</source>
        <translation>与 payops audit verify 相同，逐条检查：ID 无缺失，每条的哈希都由前一条的哈希和本条内容算出。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Every entry the filter shows, oldest first, as CSV.</source>
        <translation>将当前筛选出的全部记录按时间从早到晚导出为 CSV。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Before</source>
        <translation>变更前</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>After</source>
        <translation>变更后</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Who and when are set by the database, never by the client. The log is append-only for every account, and each entry&apos;s hash covers the one before: an entry edited or removed, even by root, breaks the chain at that entry.</source>
        <translation>操作人和时间由数据库写入，绝不由客户端填写。审计日志对任何账号都只能追加，每条记录的哈希都涵盖前一条：任何一条被修改或删除（即使由 root 操作），审计链都会在该条处断开。</translation>
    </message>
    <message>
        <location line="+49"/>
        <source>The time range is empty:</source>
        <translation>时间范围为空：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> “from” must be before “to”.</source>
        <translation>“从”必须早于“至”。</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>%1 … %2 entries so far</source>
        <translation>%1…已处理 %2 条</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Verifying the chain</source>
        <translation>正在校验审计链</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+40"/>
        <source> …</source>
        <translation>…</translation>
    </message>
    <message>
        <location line="-33"/>
        <source>The check was stopped after %1 entries: nothing is known about the rest.</source>
        <translation>已校验 %1 条时停止：其余记录的状态未知。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 %2 entries. Head hash &lt;tt&gt;%3&lt;/tt&gt;; keep it elsewhere to compare later.</source>
        <translation>%1共 %2 条。链头哈希 &lt;tt&gt;%3&lt;/tt&gt;；请另行保存，以便日后比对。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The chain is intact:</source>
        <translation>审计链完好：</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 %2. Everything from there on can no longer be trusted.</source>
        <translation>%1%2。从该条起的所有记录均不可再信任。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The chain is broken at entry %1:</source>
        <translation>审计链在第 %1 条处断开：</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The check failed: %1</source>
        <translation>校验失败：%1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Export the audit log</source>
        <translation>导出审计日志</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Exporting</source>
        <translation>正在导出</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Not exported:</source>
        <translation>未导出：</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The export was stopped; no file was written.</source>
        <translation>导出已停止，未写入任何文件。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Exported %1 entries to &lt;tt&gt;%2&lt;/tt&gt;.</source>
        <translation>已将 %1 条记录导出到 &lt;tt&gt;%2&lt;/tt&gt;。</translation>
    </message>
    <message>
        <location line="-5"/>
        <source>%1 %2</source>
        <translation>%1%2</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>The export failed: %1</source>
        <translation>导出失败：%1</translation>
    </message>
</context>
<context>
    <name>payops::BacklogModel</name>
    <message>
        <location filename="../../ui/models/backlogmodel.cpp" line="+18"/>
        <source>%1 · not forwarded yet</source>
        <translation>%1 · 尚未转发</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%1 · %n forward(s) · %2</source>
        <translation>
            <numerusform>%1 · 转发 %n 次 · %2</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>HTTP %1</source>
        <translation>HTTP %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>no answer</source>
        <translation>无应答</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Forwarded to the team&apos;s handler (the upstream) by a gateway, never paid by payops: it waits for a final answer from the upstream.</source>
        <translation>由网关转发给团队自己的处理器（上游），payops 从不为其执行支付：它在等待上游的最终应答。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The last forward got none: %1.</source>
        <translation>最近一次转发没有得到应答：%1。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The order is not in the database yet; the callback waits for it.</source>
        <translation>数据库中还没有该订单，回调在等它到达。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The order has arrived: applying the callback pays it.</source>
        <translation>订单已到达：应用此回调会将其标记为已支付。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The order is %1: applying the callback rejects it, and finance sees a second payment.</source>
        <translation>订单状态为 %1：应用此回调会被拒绝，财务会看到一笔重复支付。</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>missing</source>
        <translation>缺失</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Callback</source>
        <translation>回调</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Received (UTC)</source>
        <translation>接收时间（UTC）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Pay no</source>
        <translation>支付流水号</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Trade status</source>
        <translation>交易状态</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Answered by</source>
        <translation>应答实例</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Recorded by</source>
        <translation>记录实例</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Order now</source>
        <translation>订单现状</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Forwards</source>
        <translation>转发</translation>
    </message>
</context>
<context>
    <name>payops::BacklogPage</name>
    <message>
        <location filename="../../ui/pages/backlogpage.cpp" line="+66"/>
        <location line="+224"/>
        <source>Reading the backlog …</source>
        <translation>正在读取积压回调…</translation>
    </message>
    <message>
        <location line="-207"/>
        <source>Process backlog…</source>
        <translation>处理积压回调…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Apply matched callbacks…</source>
        <translation>入账已匹配回调…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Forward to upstream…</source>
        <translation>转发给上游…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Stop after this callback</source>
        <translation>处理完当前回调后停止</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Recorded</source>
        <translation>已记录</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Unmatched</source>
        <translation>未匹配</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gateway</source>
        <translation>网关</translation>
    </message>
    <message>
        <location line="+4"/>
        <location line="+416"/>
        <source>Select a callback for its raw body.</source>
        <translation>选择一条回调以查看原始报文。</translation>
    </message>
    <message>
        <location line="-408"/>
        <source>A drain processes each callback exactly once, oldest first, through the same payment logic as the endpoint: the recorded ones in batches over several connections, the unmatched ones one transaction each; several consoles or &lt;tt&gt;payops drain&lt;/tt&gt; may run at once. Double-click a row for the order&apos;s evidence.</source>
        <translation>回放按从早到晚的顺序把每条回调恰好处理一次，走与回调接口相同的支付逻辑：积压回调分批、通过多个连接处理，未匹配回调每条一个事务；可同时运行多个控制台或 &lt;tt&gt;payops drain&lt;/tt&gt;。双击一行可查看该订单的证据。</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Stopping after the current callback …</source>
        <translation>将在当前回调处理完后停止…</translation>
    </message>
    <message>
        <location line="+64"/>
        <source>&lt;b&gt;No payment waits to be processed.&lt;/b&gt;</source>
        <translation>&lt;b&gt;没有等待处理的支付。&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;The backlog is empty.&lt;/b&gt; No callback waits to be processed.</source>
        <translation>&lt;b&gt;没有积压回调。&lt;/b&gt;没有等待处理的回调。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;%1 callback(s) recorded&lt;/b&gt;, not processed yet, worth %2 yuan; the oldest was received %3 UTC.</source>
        <translation>&lt;b&gt;已记录 %1 条回调&lt;/b&gt;，尚未处理，金额 %2 元；最早一条接收于 %3 UTC。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&lt;b&gt;%1 gateway callback(s)&lt;/b&gt; without a final answer from the upstream (the &lt;i&gt;Gateway&lt;/i&gt; list): forwarded, never paid by payops.</source>
        <translation>&lt;b&gt;%1 条网关回调&lt;/b&gt;尚未得到上游的最终应答（见&lt;i&gt;网关&lt;/i&gt;列表）：只转发，payops 从不为其执行支付。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>over %1</source>
        <translation>超过 %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> Switch: &lt;b&gt;%1&lt;/b&gt; (version %2).</source>
        <translation>降级开关：&lt;b&gt;%1&lt;/b&gt;（版本 %2）。</translation>
    </message>
    <message numerus="yes">
        <location line="+10"/>
        <source>%n payment(s) waiting to be applied:</source>
        <translation>
            <numerusform>%n 笔支付待入账：</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source> callbacks that arrived before their order, whose order is there now (%1 yuan). </source>
        <translation>这些回调早于订单到达，现在订单已存在（%1 元）。</translation>
    </message>
    <message numerus="yes">
        <location line="+4"/>
        <source>%n callback(s) still without their order.</source>
        <translation>
            <numerusform>%n 条回调仍无对应订单。</numerusform>
        </translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Unmatched callbacks were answered &lt;tt&gt;unknown_order&lt;/tt&gt;, so the platform does not send them again; see the &lt;i&gt;Unmatched&lt;/i&gt; list.</source>
        <translation>未匹配回调已应答 &lt;tt&gt;unknown_order&lt;/tt&gt;，平台不会再推送；见&lt;i&gt;未匹配&lt;/i&gt;列表。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Recorded (%1)</source>
        <translation>已记录（%1）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Gateway (%1%2)</source>
        <translation>网关（%1%2）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Unmatched (0)</source>
        <translation>未匹配（0）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Unmatched (%1, %2 with their order)</source>
        <translation>未匹配（%1，其中 %2 条订单已到）</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>This database account may not process the backlog or apply payments (the payops_operator role may).</source>
        <translation>此数据库账号无权处理积压回调或入账（payops_operator 角色有此权限）。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>The switch is RECORD_ONLY: processing now would pay out while the endpoint is degraded, and a callback arriving meanwhile would only be recorded behind the drain. Turn the switch back to NORMAL first (the button above), then process the backlog.</source>
        <translation>降级开关为 RECORD_ONLY：现在处理会在回调接口降级期间入账并发放，而期间新到的回调只会被记录，排在回放之后。请先把开关切回 NORMAL（上方按钮），再处理积压回调。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Nothing to process.</source>
        <translation>没有需要处理的回调。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No unmatched callback has its order yet.</source>
        <translation>未匹配回调的订单都还没到。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No gateway callback waits for the upstream.</source>
        <translation>没有等待转发给上游的网关回调。</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Apply matched callbacks</source>
        <translation>入账已匹配回调</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Process the backlog</source>
        <translation>处理积压回调</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>Apply %n callback(s) whose order has arrived?</source>
        <translation>
            <numerusform>将订单已到的 %n 条回调入账？</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source>Process %n recorded callback(s) now?</source>
        <translation>
            <numerusform>现在处理 %n 条已记录的回调？</numerusform>
        </translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Each is applied exactly once, as the endpoint would have on time, under its payment&apos;s lock: a pending order is marked paid and its coupons and points issued. An order no longer pending (e.g. already paid by another payment) rejects it, and finance sees a second payment to refund. Callbacks whose order is still missing stay unmatched. The drain stops by itself if the switch turns RECORD_ONLY.</source>
        <translation>每条恰好入账一次，与回调接口按时处理时一样，在该笔支付的锁内进行：待支付的订单标记为已支付，并发放其优惠券和积分。订单若已不是待支付（例如已由另一笔支付付清），该回调被拒绝，财务会看到一笔待退款的重复支付。订单仍不存在的回调保持未匹配。降级开关一旦切到 RECORD_ONLY，回放自动停止。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Each is processed exactly once, oldest first, through the same payment logic as the endpoint: orders are marked paid and their coupons and points issued. A callback for an order already paid is rejected, not paid again; one whose order does not exist becomes unmatched. The drain stops by itself if the switch turns RECORD_ONLY.</source>
        <translation>按从早到晚的顺序每条恰好处理一次，走与回调接口相同的支付逻辑：订单标记为已支付，并发放其优惠券和积分。订单已支付的回调会被拒绝，不会重复入账；订单不存在的回调转为未匹配。降级开关一旦切到 RECORD_ONLY，回放自动停止。</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Processing …</source>
        <translation>正在处理…</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Processing … %1 of %2 (%3 a second)</source>
        <translation>正在处理… %1 / %2（每秒 %3 条）</translation>
    </message>
    <message>
        <location line="+51"/>
        <source>Stopped: the switch turned RECORD_ONLY while draining.</source>
        <translation>已停止：回放期间降级开关切到了 RECORD_ONLY。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Stopped.&lt;/b&gt;</source>
        <translation>&lt;b&gt;已停止。&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>&lt;b&gt;Done.&lt;/b&gt;</source>
        <translation>&lt;b&gt;已完成。&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 %2&lt;br&gt;Every callback processed before it stays processed; the rest are still waiting.</source>
        <translation>%1%2&lt;br&gt;出错前已处理的回调保持已处理，其余仍在等待。</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+81"/>
        <source>Stopped by an error:</source>
        <translation>因出错停止：</translation>
    </message>
    <message>
        <location line="-78"/>
        <source>%1 Applied &lt;b&gt;%2&lt;/b&gt;, rejected %3 (the order was no longer pending, e.g. already paid: a second payment for finance); %4 unmatched callback(s) left, %5 of them still without their order.</source>
        <translation>%1入账 &lt;b&gt;%2&lt;/b&gt; 条，拒绝 %3 条（订单已不是待支付，例如已支付：交财务处理重复支付）；剩余未匹配回调 %4 条，其中 %5 条仍无对应订单。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 Processed &lt;b&gt;%2&lt;/b&gt;, rejected %3 (for a business reason, e.g. the order already paid), ignored %4 (not SUCCESS), unmatched %5 (no such order yet); %6 left in the backlog.</source>
        <translation>%1已处理 &lt;b&gt;%2&lt;/b&gt; 条，拒绝 %3 条（业务原因，例如订单已支付），忽略 %4 条（非 SUCCESS），未匹配 %5 条（订单尚不存在）；积压回调剩余 %6 条。</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Forwarding …</source>
        <translation>正在转发…</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Forwarding … %1 of %2: forwarded %3, no final answer %4, skipped %5; %6 a second.</source>
        <translation>正在转发… %1 / %2：已转发 %3，无最终应答 %4，跳过 %5；每秒 %6 条。</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>%1 %2&lt;br&gt;Every callback forwarded before it keeps its answer; the rest are still waiting.</source>
        <translation>%1 %2&lt;br&gt;此前已转发的回调保留其应答；其余仍在等待。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 Forwarded &lt;b&gt;%2&lt;/b&gt; to %3 with a final answer; %4 got none and wait for the next drain; %5 skipped (live traffic was forwarding them, or they were settled meanwhile).</source>
        <translation>%1 已转发 &lt;b&gt;%2&lt;/b&gt; 条到 %3 并得到最终应答；%4 条没有得到，等待下次回放；跳过 %5 条（实时流量正在转发它们，或期间已有结果）。</translation>
    </message>
</context>
<context>
    <name>payops::BusyIndicator</name>
    <message>
        <location filename="../../ui/widgets/busyindicator.cpp" line="+17"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>%1 … %2 s</source>
        <translation>%1 … %2 秒</translation>
    </message>
</context>
<context>
    <name>payops::CallbackService</name>
    <message>
        <location filename="../../app/service/callbackservice.cpp" line="+111"/>
        <source>the signing secret is empty</source>
        <translation>签名密钥为空</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>database &apos;%1&apos; has no payops schema; run payops migrate --db DSN</source>
        <translation>数据库“%1”没有 payops 表结构，请运行 payops migrate --db DSN</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>refusing --handler unsafe-demo: database &apos;%1&apos; is not marked as a sandbox. The unsafe handler pays out twice on purpose; run it only on a sandbox (payops sandbox start, or payops migrate --sandbox on a throwaway database)</source>
        <translation>拒绝 --handler unsafe-demo：数据库“%1”未标记为沙箱。不安全的处理器会故意重复发放，只能在沙箱上运行（payops sandbox start，或在可丢弃的数据库上运行 payops migrate --sandbox）</translation>
    </message>
    <message>
        <location line="+85"/>
        <source>instance name &apos;%1&apos; is in use by a live payops-callbackd (pid %2 on %3); choose another --instance, or pass --take-over if that process is gone</source>
        <translation>实例名“%1”正被一个运行中的 payops-callbackd 使用（%3 上的 pid %2）；请换一个 --instance，若该进程已不在，加 --take-over</translation>
    </message>
</context>
<context>
    <name>payops::CallbackSwitch</name>
    <message>
        <location filename="../../app/domain/callback/callbackswitch.cpp" line="+31"/>
        <source>callback_switch has no row; run payops migrate</source>
        <translation>callback_switch 没有数据行，请运行 payops migrate</translation>
    </message>
    <message>
        <location line="+146"/>
        <source>a reason is required to flip the callback switch</source>
        <translation>切换降级开关必须填写原因</translation>
    </message>
</context>
<context>
    <name>payops::Compensation</name>
    <message>
        <location filename="../../app/domain/money/compensation.cpp" line="+320"/>
        <source>%1 coupon(s) to freeze, %2 used coupon(s) to write off, %3 used coupon(s) as receivable, %4 points row(s) to reverse (%5 points); %6 yuan in all</source>
        <translation>冻结 %1 张优惠券，核销 %2 张已使用的优惠券，%3 张已使用的优惠券记为应收，冲回 %4 条积分记录（%5 积分）；合计 %6 元</translation>
    </message>
    <message>
        <location line="+108"/>
        <source>a compensation needs a reason and a ticket</source>
        <translation>补偿必须填写原因和工单号</translation>
    </message>
</context>
<context>
    <name>payops::CompensationBatchModel</name>
    <message>
        <location filename="../../ui/models/compensationbatchmodel.cpp" line="+52"/>
        <source>At (UTC)</source>
        <translation>时间（UTC）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>By</source>
        <translation>执行人</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Actions</source>
        <translation>操作数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Ticket</source>
        <translation>工单</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Batch</source>
        <translation>批次</translation>
    </message>
</context>
<context>
    <name>payops::CompensationDialog</name>
    <message>
        <location filename="../../ui/dialogs/compensationdialog.cpp" line="+52"/>
        <location line="+1"/>
        <source>Compensate duplicates</source>
        <translation>补偿重复发放</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Scope: &lt;b&gt;%1&lt;/b&gt;</source>
        <translation>范围：&lt;b&gt;%1&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+8"/>
        <location line="+1"/>
        <source>Approve compensation request %1</source>
        <translation>批准补偿申请 %1</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Request &lt;b&gt;%1&lt;/b&gt; by &lt;b&gt;%2&lt;/b&gt; at %3 UTC asks for %4: %5 coupon(s) to freeze, %6 used coupon(s), %7 points row(s). Its reason: %8 (ticket %9). Below is what it covers now; an approval is refused if that is not the amount asked.</source>
        <translation>申请 &lt;b&gt;%1&lt;/b&gt; 由 &lt;b&gt;%2&lt;/b&gt; 于 %3 UTC 提交，申请金额 %4：冻结 %5 张优惠券，已使用的优惠券 %6 张，积分记录 %7 条。原因：%8（工单 %9）。下方是它当前覆盖的内容；若与申请金额不符，批准将被拒绝。</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>a write-off (finance absorbs it)</source>
        <translation>核销（由财务承担）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a receivable (owed by the user)</source>
        <translation>应收款（由用户偿还）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>A duplicate coupon already used becomes</source>
        <translation>已使用的重复优惠券记为</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Unused duplicate coupons to freeze</source>
        <translation>待冻结的未使用重复优惠券</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Duplicate points rows to reverse</source>
        <translation>待冲正的重复积分记录</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Orders concerned</source>
        <translation>涉及订单</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Money corrected&lt;/b&gt;</source>
        <translation>&lt;b&gt;纠正金额&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>Why — required, kept with every action and in the audit log</source>
        <translation>原因（必填），随每项操作保存并记入审计日志</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Incident or ticket id — required</source>
        <translation>事故或工单 ID（必填）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Ticket</source>
        <translation>工单</translation>
    </message>
    <message>
        <location line="-131"/>
        <location line="+17"/>
        <location line="+225"/>
        <source>Compensate…</source>
        <translation>补偿…</translation>
    </message>
    <message>
        <location line="+43"/>
        <source>Compensate now</source>
        <translation>立即补偿</translation>
    </message>
    <message>
        <location line="-183"/>
        <source>Stop after this batch</source>
        <translation>本批完成后停止</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Stopping after the current batch …</source>
        <translation>当前批次完成后停止…</translation>
    </message>
    <message>
        <location line="+55"/>
        <source>Planning the dry run … nothing is changed.</source>
        <translation>正在规划试运行…不会做任何修改。</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Used duplicate coupons to write off</source>
        <translation>待核销的已使用重复优惠券</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Used duplicate coupons as receivable</source>
        <translation>记为应收款的已使用重复优惠券</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 (%2 points)</source>
        <translation>%1（%2 积分）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>&lt;b&gt;Nothing to compensate:&lt;/b&gt; no live duplicate in this scope.</source>
        <translation>&lt;b&gt;无需补偿：&lt;/b&gt;此范围内没有未补偿的重复发放。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Dry run: nothing has been changed. The first copy of each duplicate stays; nothing is deleted.</source>
        <translation>试运行：未做任何修改。每组重复保留第一份，不删除任何记录。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The duplicates changed since the request was made (%1 now, %2 asked): an approval will be refused; ask for a new request.</source>
        <translation>提交申请后重复发放已有变化（当前 %1，申请 %2）：批准将被拒绝，请重新提交申请。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1, with the %2 this account compensated alone in the four-eyes window, is above the threshold of %3: this files a request that another operator account approves on the Compensation page; nothing is compensated until then.</source>
        <translation>%1 加上该账号在双人复核时间窗内已单独补偿的 %2，超过阈值 %3：将提交一份申请，由另一个运维账号在“补偿”页面批准；批准前不会执行任何补偿。</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Approve and compensate…</source>
        <translation>批准并补偿…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Request approval…</source>
        <translation>申请批准…</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Needs a preview with something to do, a reason and a ticket.</source>
        <translation>需要先有可执行内容的预览，并填写原因和工单。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&lt;ul&gt;&lt;li&gt;freeze %1 unused duplicate coupon(s)&lt;/li&gt;&lt;li&gt;book %2 used duplicate coupon(s) as %3&lt;/li&gt;&lt;li&gt;reverse %4 duplicate points row(s), %5 points, adjusting the balances (a balance may go negative; it is reported)&lt;/li&gt;&lt;/ul&gt;&lt;p&gt;on %6 order(s): &lt;b&gt;%7&lt;/b&gt; in all. Reason: &lt;b&gt;%8&lt;/b&gt;, ticket &lt;b&gt;%9&lt;/b&gt;.&lt;/p&gt;</source>
        <translation>&lt;ul&gt;&lt;li&gt;冻结 %1 张未使用的重复优惠券&lt;/li&gt;&lt;li&gt;将 %2 张已使用的重复优惠券记为%3&lt;/li&gt;&lt;li&gt;冲正 %4 条重复积分记录，共 %5 积分，并调整余额（余额可能变为负数，会单独列出）&lt;/li&gt;&lt;/ul&gt;&lt;p&gt;涉及 %6 个订单，合计 &lt;b&gt;%7&lt;/b&gt;。原因：&lt;b&gt;%8&lt;/b&gt;，工单 &lt;b&gt;%9&lt;/b&gt;。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>write-offs</source>
        <translation>核销</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>receivables</source>
        <translation>应收款</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&lt;h3&gt;File a request for another operator?&lt;/h3&gt;&lt;p&gt;When approved, it will:&lt;/p&gt;%1&lt;p&gt;Nothing changes until another operator account approves it.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;提交申请，由另一位运维批准？&lt;/h3&gt;&lt;p&gt;批准后将：&lt;/p&gt;%1&lt;p&gt;在另一个运维账号批准之前，不会有任何改动。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>File the request</source>
        <translation>提交申请</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;h3&gt;%1&lt;/h3&gt;&lt;p&gt;This will:&lt;/p&gt;%2&lt;p&gt;Each action is one row in &lt;tt&gt;compensation&lt;/tt&gt; and one audit entry under your database account. Nothing is deleted; a duplicate already compensated by someone else meanwhile is skipped.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;%1&lt;/h3&gt;&lt;p&gt;将会：&lt;/p&gt;%2&lt;p&gt;每项操作在 &lt;tt&gt;compensation&lt;/tt&gt; 中记一行，并以你的数据库账号记一条审计日志。不删除任何记录；期间已被他人补偿的重复发放会被跳过。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Approve request %1 and compensate?</source>
        <translation>批准申请 %1 并补偿？</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compensate now?</source>
        <translation>立即补偿？</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Approve and compensate now</source>
        <translation>批准并立即补偿</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Filing the request …</source>
        <translation>正在提交申请…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Compensating …</source>
        <translation>正在补偿…</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Compensating … %1 of %2 actions</source>
        <translation>正在补偿… 第 %1 / %2 项</translation>
    </message>
    <message>
        <location line="-170"/>
        <source>Stopped by an error.</source>
        <translation>因出错而停止。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1&lt;br&gt;Every batch committed before it stays done; a new run finishes the rest.</source>
        <translation>%1&lt;br&gt;此前已提交的批次保持有效；重新运行即可完成其余部分。</translation>
    </message>
    <message>
        <location line="+200"/>
        <source>Not approved.</source>
        <translation>未批准。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&lt;b&gt;Request %1 is filed.&lt;/b&gt;</source>
        <translation>&lt;b&gt;申请 %1 已提交。&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>It waits for another operator account to approve it on the Compensation page. Nothing has been compensated yet.</source>
        <translation>等待另一个运维账号在“补偿”页面批准。尚未执行任何补偿。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>&lt;b&gt;Stopped.&lt;/b&gt; What was done stays done; a new run finishes the rest.</source>
        <translation>&lt;b&gt;已停止。&lt;/b&gt;已完成的部分保持有效；重新运行即可完成其余部分。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Done.&lt;/b&gt;</source>
        <translation>&lt;b&gt;完成。&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compensated &lt;b&gt;%1&lt;/b&gt; duplicate(s); skipped %2 (compensated by someone else meanwhile, or changed since the preview).&lt;br&gt;Batch &lt;tt&gt;%3&lt;/tt&gt;.</source>
        <translation>已补偿 &lt;b&gt;%1&lt;/b&gt; 份重复发放；跳过 %2 份（期间已被他人补偿，或预览后已有变化）。&lt;br&gt;批次 &lt;tt&gt;%3&lt;/tt&gt;。</translation>
    </message>
    <message numerus="yes">
        <location line="-29"/>
        <source>%n duplicate(s) were not kept: another cluster node&apos;s transaction rolled their batch back. Run the compensation again to finish them.</source>
        <translation>
            <numerusform>%n 份重复发放未保留：另一集群节点的事务回滚了它们所在的批次。请再次运行补偿以完成。</numerusform>
        </translation>
    </message>
    <message>
        <location line="+37"/>
        <source>&lt;br&gt;Request %1 is approved%2.</source>
        <translation>&lt;br&gt;申请 %1 已批准%2。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> and executed</source>
        <translation>并已执行</translation>
    </message>
    <message numerus="yes">
        <location line="+7"/>
        <source>%n user(s) now have a negative points balance:</source>
        <translation>
            <numerusform>%n 个用户的积分余额现为负数：</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source> %1.</source>
        <translation>%1。</translation>
    </message>
</context>
<context>
    <name>payops::CompensationPage</name>
    <message>
        <location filename="../../ui/pages/compensationpage.cpp" line="+55"/>
        <source>Compensate every open duplicate…</source>
        <translation>补偿全部未处理的重复发放…</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Requests for a second operator</source>
        <translation>待另一名运维审批的申请</translation>
    </message>
    <message>
        <location line="+7"/>
        <location line="+121"/>
        <source>Approve and compensate…</source>
        <translation>批准并补偿…</translation>
    </message>
    <message>
        <location line="-119"/>
        <source>Reject…</source>
        <translation>驳回…</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Compensate every open duplicate on the team&apos;s tables…</source>
        <translation>补偿团队表上所有未补偿的重复发放…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compensation batches carried out</source>
        <translation>已执行的补偿批次</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Reject request %1</source>
        <translation>驳回申请 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reject request %1 by %2 (%3)? It is kept, marked REJECTED, and nothing is compensated.</source>
        <translation>驳回 %2 提交的申请 %1（%3）？申请会保留并标记为 REJECTED，不做任何补偿。</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>Compensations through the mapping %1, newest first. One that takes what an account compensated alone in the four-eyes window above &lt;b&gt;%2&lt;/b&gt; waits as a request until another operator account approves it, through the same mapping file.</source>
        <translation>通过映射 %1 进行的补偿，最新的在前。使某账号在双人复核时间窗内单独补偿的金额超过 &lt;b&gt;%2&lt;/b&gt; 的补偿，会作为申请等待另一位运维账号通过同一个映射文件批准。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>A compensation that takes what an account compensated alone in the four-eyes window above &lt;b&gt;%1&lt;/b&gt; waits as a request until another operator account approves it (payops_meta four_eyes_threshold_fen and four_eyes_window_hours).</source>
        <translation>若一笔补偿使某账号在双人复核时间窗内单独补偿的总额超过 &lt;b&gt;%1&lt;/b&gt;，它先作为申请挂起，直到另一个运维账号批准（payops_meta four_eyes_threshold_fen 与 four_eyes_window_hours）。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>No four-eyes threshold is set: every compensation runs at once.</source>
        <translation>未设置双人复核阈值：所有补偿立即执行。</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>This database account may not compensate.</source>
        <translation>此数据库账号无权执行补偿。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Request %1 is for the team&apos;s own tables: open the console with the mapping file it was made with to approve it.</source>
        <translation>申请 %1 针对团队自己的表：请用提交它时的映射文件打开控制台后再批准。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Carry on the approved run…</source>
        <translation>继续执行已批准的补偿…</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>This database account may not decide compensation requests.</source>
        <translation>此数据库账号无权审批补偿申请。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>You filed this request: another operator account must decide it.</source>
        <translation>这是你提交的申请：须由另一个运维账号审批。</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>every open duplicate</source>
        <translation>全部未处理的重复发放</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>every order with an open duplicate</source>
        <translation>所有有未补偿重复发放的订单</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Request %1 rejected.</source>
        <translation>申请 %1 已驳回。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Request %1 was decided by someone else meanwhile.</source>
        <translation>申请 %1 已被他人先行审批。</translation>
    </message>
</context>
<context>
    <name>payops::CompensationRequestModel</name>
    <message>
        <location filename="../../ui/models/compensationrequestmodel.cpp" line="+44"/>
        <source>On the team&apos;s own tables, through the mapping file with SHA-256 %1…: %2. %3 row(s) to freeze, %4 to reverse.</source>
        <translation>在团队自己的表上，通过 SHA-256 为 %1… 的映射文件：%2。冻结 %3 行，冲正 %4 行。</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Request</source>
        <translation>申请</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Requested by</source>
        <translation>申请人</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>At (UTC)</source>
        <translation>时间（UTC）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Coupons</source>
        <translation>优惠券</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Used coupons</source>
        <translation>已使用券</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Points rows</source>
        <translation>积分记录</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Ticket</source>
        <translation>工单</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Decided by</source>
        <translation>审批人</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
</context>
<context>
    <name>payops::CompensationRequests</name>
    <message>
        <location filename="../../app/domain/money/compensationrequest.cpp" line="+202"/>
        <source>a compensation request needs a reason and a ticket</source>
        <translation>补偿申请必须填写原因和工单号</translation>
    </message>
    <message>
        <location line="+84"/>
        <source>request %1 is %2, not pending</source>
        <translation>申请 %1 的状态是 %2，不是待处理</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>there is no compensation request %1</source>
        <translation>不存在补偿申请 %1</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>the duplicates grew since request %1 was made (%2 fen now, %3 fen asked); make a new request</source>
        <translation>申请 %1 提交后重复记录增多了（现在 %2 分，申请时 %3 分），请重新申请</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the duplicates shrank since request %1 was made (%2 fen now, %3 fen asked); make a new request</source>
        <translation>申请 %1 提交后重复记录减少了（现在 %2 分，申请时 %3 分），请重新申请</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>request %1 was decided by someone else meanwhile</source>
        <translation>申请 %1 已在此期间被他人处理</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>request %1 is for the team&apos;s own tables, planned through a mapping file: approve it with that mapping (--mapping)</source>
        <translation>申请 %1 针对团队自己的表，是通过映射文件规划的：请用该映射批准（--mapping）</translation>
    </message>
</context>
<context>
    <name>payops::CompensationWorkflow</name>
    <message>
        <location filename="../../app/domain/money/compensationworkflow.cpp" line="+51"/>
        <source>request %1 was made by this account (%2): it needs another operator to approve it</source>
        <translation>申请 %1 由本账号（%2）提交，需要另一位运维批准（双人复核）</translation>
    </message>
</context>
<context>
    <name>payops::ConnectionDialog</name>
    <message>
        <location filename="../../ui/dialogs/connectiondialog.cpp" line="+30"/>
        <source>Connect — payops console</source>
        <translation>连接 — payops 控制台</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>optional: db2:3306, the replica that takes over</source>
        <translation>可选：db2:3306，故障切换后接管的副本</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The replica that takes over after a failover. Each connection goes to the first server that answers and is not read-only, and is refused when two take writes (docs/servers.md, &quot;Failover&quot;).</source>
        <translation>故障切换后接管的副本。每个连接都会连到第一台有应答且不是只读的服务器；若有两台都接受写入，则拒绝连接（见 servers.md 的故障切换一节）。</translation>
    </message>
    <message>
        <location line="+5"/>
        <location line="+56"/>
        <source>unix socket path (instead of host and port)</source>
        <translation>unix socket 路径（代替主机和端口）</translation>
    </message>
    <message>
        <location line="-48"/>
        <source>optional: your own tables, described by a TOML file</source>
        <translation>可选：用 TOML 文件描述的自有表</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Without a mapping the console reads payops&apos;s own tables. With one it reads the team&apos;s own orders, payments and side effects where the file says they are (docs/mapping.md).</source>
        <translation>不指定映射时，控制台读取 payops 自己的表；指定后，按文件所写的位置读取团队自己的订单、支付记录和副作用（格式见映射文件的说明文档）。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Choose…</source>
        <translation>选择…</translation>
    </message>
    <message>
        <location line="+4"/>
        <location line="+18"/>
        <source>Mapping file</source>
        <translation>映射文件</translation>
    </message>
    <message>
        <location line="-18"/>
        <source>Mapping files (*.toml)</source>
        <translation>映射文件 (*.toml)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Remember in the system keychain</source>
        <translation>将密码保存到系统密钥环</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Profile name</source>
        <translation>配置名称</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+35"/>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <location line="-34"/>
        <location line="+35"/>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <location line="-34"/>
        <source>Fail over to</source>
        <translation>故障切换到</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+34"/>
        <source>Socket</source>
        <translation>Socket</translation>
    </message>
    <message>
        <location line="-33"/>
        <location line="+34"/>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <location line="-33"/>
        <source>Database</source>
        <translation>数据库</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TLS CA file</source>
        <translation>TLS CA 文件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TLS certificate</source>
        <translation>TLS 证书</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TLS key</source>
        <translation>TLS 私钥</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+29"/>
        <source>Password</source>
        <translation>密码</translation>
    </message>
    <message>
        <location line="-25"/>
        <source>Read from (replica)</source>
        <translation>从以下服务器读取（从库）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Optional. The pages read from this server, the same database on a replica; switching, draining, compensating and approving still run on the server above. Empty: everything on the server above.</source>
        <translation>可选。各页面从此服务器读取，即从库上的同一个数据库；切换、回放、补偿和审批仍在上面的服务器上执行。留空：全部在上面的服务器上进行。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>the same user when empty</source>
        <translation>留空则使用同一用户</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Looking for a system keychain …</source>
        <translation>正在查找系统密钥环…</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Save profile</source>
        <translation>保存配置</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Delete profile</source>
        <translation>删除配置</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Connect</source>
        <translation>连接</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>The sandbox did not start: %1</source>
        <translation>沙箱未能启动：%1</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Passwords are kept in the system keychain, never in the settings file.</source>
        <translation>密码保存在系统密钥环中，绝不写入设置文件。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No system keychain service answered (it said: %1), so passwords are not stored anywhere: the password is asked for each time.</source>
        <translation>没有系统密钥环服务响应（返回：%1），因此密码不会保存在任何地方：每次连接都需要输入密码。</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Local sandbox</source>
        <translation>本地沙箱</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>+ New profile</source>
        <translation>+ 新建配置</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Starts a private MariaDB with demo data in ~/.local/share/payops/sandbox (the first start takes a while) and connects to it.</source>
        <translation>在 ~/.local/share/payops/sandbox 启动一个带演示数据的私有 MariaDB（首次启动需要一些时间），然后连接到它。</translation>
    </message>
    <message>
        <location line="+64"/>
        <source>Give the profile a name first.</source>
        <translation>请先给配置命名。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Profile %1 saved (without its password).</source>
        <translation>配置 %1 已保存（不含密码）。</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Starting the local sandbox …</source>
        <translation>正在启动本地沙箱…</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Connecting to %1 …</source>
        <translation>正在连接 %1…</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Connecting to the replica %1 …</source>
        <translation>正在连接从库 %1…</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>The replica: %1</source>
        <translation>从库：%1</translation>
    </message>
</context>
<context>
    <name>payops::CsvWriter</name>
    <message>
        <location filename="../../app/domain/export/csvwriter.cpp" line="+39"/>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
</context>
<context>
    <name>payops::DataTable</name>
    <message>
        <location filename="../../ui/widgets/datatable.cpp" line="+42"/>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Every row of this table, as it shows them, to a CSV file Excel opens.</source>
        <translation>按当前显示导出本表全部行，生成 Excel 可打开的 CSV 文件。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Export CSV</source>
        <translation>导出 CSV</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>Exporting…</source>
        <translation>正在导出…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+29"/>
        <location line="+23"/>
        <source>Not exported: %1</source>
        <translation>未导出：%1</translation>
    </message>
    <message>
        <location line="-21"/>
        <source>The export was cancelled; no file was written.</source>
        <translation>导出已取消，未写入任何文件。</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+15"/>
        <source>Exported %1 rows to %2.</source>
        <translation>已导出 %1 行到 %2。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Not exported: the table is not connected.</source>
        <translation>未导出：表格未连接数据库。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Exporting… %1 rows</source>
        <translation>正在导出… %1 行</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Reading the table… %1 rows</source>
        <translation>正在读取表格… %1 行</translation>
    </message>
</context>
<context>
    <name>payops::DemoStatements</name>
    <message>
        <location filename="../../app/lab/demostatements.cpp" line="+269"/>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>cannot create %1</source>
        <translation>无法创建 %1</translation>
    </message>
</context>
<context>
    <name>payops::DoublePayments</name>
    <message>
        <location filename="../../app/domain/money/duplicates/doublepayments.cpp" line="+26"/>
        <source>no order paid twice by the customer</source>
        <translation>没有客户重复支付的订单</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 order(s) paid twice by the customer (%2 refused payment(s), %3 yuan to refund), e.g. orders %4</source>
        <translation>%1 个订单被客户重复支付（%2 笔支付被拒，应退款 %3 元），例如订单 %4</translation>
    </message>
</context>
<context>
    <name>payops::DraftModel</name>
    <message>
        <location filename="../../ui/models/draftmodel.cpp" line="+36"/>
        <source>%1, %2 UTC</source>
        <translation>%1，%2 UTC</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Waiting for a second account</source>
        <translation>等待另一账号复核</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Confirmed: in the backlog</source>
        <translation>已确认：已进入积压回调</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Discarded</source>
        <translation>已丢弃</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Draft</source>
        <translation>草稿</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>pay_no</source>
        <translation>pay_no</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Line</source>
        <translation>行号</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Drafted by</source>
        <translation>起草人</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Decided by</source>
        <translation>复核人</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Callback</source>
        <translation>回调</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
</context>
<context>
    <name>payops::Dsn</name>
    <message>
        <location filename="../../app/db/dsn.cpp" line="+48"/>
        <location line="+64"/>
        <source>it is not a URL</source>
        <translation>它不是 URL</translation>
    </message>
    <message>
        <location line="-18"/>
        <source>invalid DSN: %1 (expected mysql://USER[:PASS]@HOST[:PORT]/DB or mysql://USER@localhost/DB?socket=/path/to.sock)</source>
        <translation>DSN 无效：%1（应为 mysql://USER[:PASS]@HOST[:PORT]/DB 或 mysql://USER@localhost/DB?socket=/path/to.sock）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>it is empty</source>
        <translation>它是空的</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&apos;%1&apos; in the list of servers is not HOST[:PORT]</source>
        <translation>服务器列表中的“%1”不是 HOST[:PORT]</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>scheme must be mysql://, not &apos;%1&apos;</source>
        <translation>协议必须是 mysql://，而不是“%1”</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>unexpected &apos;#&apos; part</source>
        <translation>多余的“#”部分</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>no user</source>
        <translation>缺少用户名</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>no host</source>
        <translation>缺少主机</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>port is not a number from 1 to 65535</source>
        <translation>端口不是 1 到 65535 之间的数字</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>no database name</source>
        <translation>缺少数据库名</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>database name &apos;%1&apos; must be 1-64 letters, digits, _ or $</source>
        <translation>数据库名“%1”必须由 1-64 个字母、数字、_ 或 $ 组成</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>socket must be an absolute path</source>
        <translation>socket 必须是绝对路径</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>connect-timeout must be 1-600 seconds</source>
        <translation>connect-timeout 必须是 1-600 秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>unknown option &apos;%1&apos; (known: socket, ssl-ca, ssl-cert, ssl-key, connect-timeout)</source>
        <translation>未知选项“%1”（可用：socket、ssl-ca、ssl-cert、ssl-key、connect-timeout）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>a socket needs host &apos;localhost&apos;</source>
        <translation>使用 socket 时主机必须是“localhost”</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>a socket takes one server, not a list</source>
        <translation>使用 socket 时只能指定一台服务器，不能是列表</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>no database given: pass --db DSN or set PAYOPS_DB</source>
        <translation>未指定数据库：请传入 --db DSN 或设置 PAYOPS_DB</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>the password in --db can be read by every user of this machine (ps, /proc/PID/cmdline): leave it out of the DSN and set PAYOPS_DB_PASSWORD instead, which only you and root can read</source>
        <translation>--db 中的密码本机每个用户都能读到（ps、/proc/PID/cmdline）：请把它从 DSN 中去掉，改为设置 PAYOPS_DB_PASSWORD，只有你和 root 能读到它</translation>
    </message>
</context>
<context>
    <name>payops::DuplicateCharts</name>
    <message>
        <location filename="../../ui/widgets/duplicatecharts.cpp" line="+62"/>
        <source>Extra copies issued over time</source>
        <translation>多余份数发放趋势</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open duplicates by kind</source>
        <translation>未处理的重复发放（按类型）</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Extra copies issued per hour (UTC)</source>
        <translation>每小时发放的多余份数（UTC）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Extra copies issued per minute (UTC)</source>
        <translation>每分钟发放的多余份数（UTC）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>coupons</source>
        <translation>优惠券</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>points</source>
        <translation>积分</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>No open duplicates in this window</source>
        <translation>此时间窗口内没有未处理的重复发放</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>extra copies</source>
        <translation>多余份数</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>coupons ¥%1</source>
        <translation>优惠券 ¥%1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>points ¥%1</source>
        <translation>积分 ¥%1</translation>
    </message>
</context>
<context>
    <name>payops::DuplicateModel</name>
    <message>
        <location filename="../../ui/models/duplicatemodel.cpp" line="+82"/>
        <source>coupon</source>
        <translation>优惠券</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>points</source>
        <translation>积分</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Template / type</source>
        <translation>模板 / 类型</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Copies</source>
        <translation>份数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Live</source>
        <translation>有效</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compensated</source>
        <translation>已补偿</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Each (¥)</source>
        <translation>单价（¥）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>At risk (¥)</source>
        <translation>风险金额（¥）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>First issued (UTC)</source>
        <translation>首次发放（UTC）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Last issued (UTC)</source>
        <translation>末次发放（UTC）</translation>
    </message>
</context>
<context>
    <name>payops::DuplicateWatch</name>
    <message>
        <location filename="../../app/domain/money/duplicates/duplicatewatch.cpp" line="+264"/>
        <source>another session was refreshing the duplicate watch; these are its last figures</source>
        <translation>另一个会话正在刷新重复监控，以下是它上次的数据</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>as the primary last refreshed them (read from a replica)</source>
        <translation>主库上次刷新时的数字（从副本读取）</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>this database has no duplicate watch yet: run payops migrate (migration 0010) with an account that may change the schema</source>
        <translation>该数据库还没有重复监控：请用有权修改表结构的账号运行 payops migrate（迁移 0010）</translation>
    </message>
    <message>
        <location line="-30"/>
        <source>this account may not update the duplicate watch (payops_operator and payops_finance may); these are the figures of its last refresh</source>
        <translation>该账号无权更新重复监控（payops_operator 和 payops_finance 可以），以下是上次刷新的数据</translation>
    </message>
</context>
<context>
    <name>payops::DuplicatesPage</name>
    <message>
        <location filename="../../ui/pages/duplicatespage.cpp" line="+56"/>
        <source>coupons and points</source>
        <translation>优惠券和积分</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>coupons</source>
        <translation>优惠券</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>points</source>
        <translation>积分</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>not yet compensated</source>
        <translation>未补偿</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>compensated</source>
        <translation>已补偿</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>both</source>
        <translation>全部</translation>
    </message>
    <message>
        <location line="+99"/>
        <source>any user</source>
        <translation>任意用户</translation>
    </message>
    <message>
        <location line="-97"/>
        <location filename="../../ui/pages/duplicatespagemapped.cpp" line="+86"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Issued in</source>
        <translation>发放时间</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+2"/>
        <location filename="../../ui/pages/duplicatespagemapped.cpp" line="+5"/>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Compensate selected…</source>
        <translation>补偿所选…</translation>
    </message>
    <message>
        <location line="+2"/>
        <location filename="../../ui/pages/duplicatespagemapped.cpp" line="+30"/>
        <source>Compensate their orders…</source>
        <translation>补偿所在订单…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compensate all in this filter…</source>
        <translation>补偿筛选出的全部…</translation>
    </message>
    <message>
        <location line="+3"/>
        <location filename="../../ui/pages/duplicatespagemapped.cpp" line="+4"/>
        <source>Each opens a dry-run preview first:</source>
        <translation>每项都先打开试运行预览：</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Double-click a row for the order&apos;s evidence. Duplicate callbacks by pay_no cannot exist: pay_callback_log has a unique key on it. Money at risk counts live extra copies only; points at their cash value from the settings.</source>
        <translation>双击一行可查看该订单的证据。同一 pay_no 的重复回调不可能存在：pay_callback_log 在该列上有唯一键。风险金额只计仍有效的多余份数；积分按设置中的现金价值折算。</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Cancelled. Refresh to scan again.</source>
        <translation>已取消。刷新可重新扫描。</translation>
    </message>
    <message>
        <location line="+42"/>
        <source>This database account may not compensate (the payops_operator role may, with the grants of docs/mapping.md).</source>
        <translation>此数据库账号不能补偿（payops_operator 角色可以，并需 docs/mapping.md 所列的授权）。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>This database account may not compensate (the payops_operator role may).</source>
        <translation>此数据库账号无权补偿（payops_operator 角色有此权限）。</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>every open duplicate this filter shows (%1)</source>
        <translation>当前筛选出的全部未补偿重复（%1）</translation>
    </message>
    <message numerus="yes">
        <location line="+14"/>
        <source>%n whole order(s)</source>
        <translation>
            <numerusform>%n 个订单（整单）</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n selected duplicate group(s)</source>
        <translation>
            <numerusform>所选的 %n 个重复组</numerusform>
        </translation>
    </message>
    <message>
        <location line="+44"/>
        <source>&lt;b&gt;%1 open duplicate groups on %2 orders&lt;/b&gt;: %3 extra coupons (¥%4) and %5 extra points rows (¥%6). &lt;b style=&apos;color:%9&apos;&gt;Money at risk ¥%7.&lt;/b&gt; %8 compensations recorded.</source>
        <translation>&lt;b&gt;%2 个订单上有 %1 个未补偿的重复组&lt;/b&gt;：多余优惠券 %3 张（¥%4），多余积分记录 %5 条（¥%6）。&lt;b style=&apos;color:%9&apos;&gt;风险金额 ¥%7。&lt;/b&gt;已记录补偿 %8 次。</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Scanning</source>
        <translation>正在扫描</translation>
    </message>
    <message>
        <location filename="../../ui/pages/duplicatespagemapped.cpp" line="-66"/>
        <source>%1 points</source>
        <translation>%1 积分</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>every side effect</source>
        <translation>全部副作用</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Last copy issued in</source>
        <translation>最后一份发放于</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+20"/>
        <source>Side effect</source>
        <translation>副作用</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Row id</source>
        <translation>行 id</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Value</source>
        <translation>价值</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Created</source>
        <translation>创建时间</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Live / used</source>
        <translation>有效 / 已使用</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compensated</source>
        <translation>已补偿</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>The team&apos;s tables, through the mapping %1. A group is listed while a side effect has more than one live copy for one key in an order; the first copy stays. Double-click a group for its order&apos;s evidence. Points at their cash value from the settings.</source>
        <translation>团队自己的表，通过映射 %1。某个订单的某个副作用对同一个键有多于一份有效副本时，该组会列出；第一份保留。双击某组查看其订单的证据。积分按设置中的现金价值计算。</translation>
    </message>
    <message>
        <location line="+89"/>
        <source>&lt;br&gt;The filter shows %1 groups on %2 orders.</source>
        <translation>&lt;br&gt;筛选结果：%2 个订单上的 %1 个组。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;br&gt;The first %1 orders are listed; the CSV export holds every group.</source>
        <translation>&lt;br&gt;只列出前 %1 个订单；导出的 CSV 包含全部组。</translation>
    </message>
    <message>
        <location line="-107"/>
        <source>Compensate every open order…</source>
        <translation>补偿所有未处理的订单…</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Cancelled. Refresh to read again; the watch goes on from where it stopped.</source>
        <translation>已取消。刷新可再次读取；监视会从停下的地方继续。</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Reading the team&apos;s tables</source>
        <translation>正在读取团队的表</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>First pass: %1 % read</source>
        <translation>首次扫描：已读 %1 %</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>&lt;b&gt;%1&lt;/b&gt;: %2 open groups, %3 extra copies (%4)</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;：%2 个未处理的重复组，%3 份多余副本（%4）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&lt;b&gt;%1 open duplicate groups on %2 orders.&lt;/b&gt; &lt;b style=&apos;color:%3&apos;&gt;Money at risk %4.&lt;/b&gt;&lt;br&gt;%5</source>
        <translation>&lt;b&gt;%2 个订单上有 %1 个未处理的重复组。&lt;/b&gt; &lt;b style=&apos;color:%3&apos;&gt;风险金额 %4。&lt;/b&gt;&lt;br&gt;%5</translation>
    </message>
    <message>
        <location line="+43"/>
        <source>used</source>
        <translation>已使用</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>live</source>
        <translation>有效</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>not live</source>
        <translation>无效</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>every order with an open duplicate</source>
        <translation>所有有未补偿重复发放的订单</translation>
    </message>
    <message numerus="yes">
        <location line="+10"/>
        <source>%n selected order(s)</source>
        <translation>
            <numerusform>%n 个选中的订单</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>payops::EventModel</name>
    <message>
        <location filename="../../ui/models/eventmodel.cpp" line="+28"/>
        <source>received %1</source>
        <translation>收到 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>lock acquired</source>
        <translation>获得锁</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>transaction begins</source>
        <translation>事务开始</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>transaction committed</source>
        <translation>事务已提交</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>lock released BEFORE commit</source>
        <translation>锁在提交之前就已释放</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>lock released</source>
        <translation>锁已释放</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>answered %1 (%2)</source>
        <translation>应答 %1（%2）</translation>
    </message>
    <message>
        <location line="+51"/>
        <source>Offset</source>
        <translation>偏移</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Time (UTC)</source>
        <translation>时间（UTC）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Where</source>
        <translation>位置</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>What happened</source>
        <translation>事件</translation>
    </message>
</context>
<context>
    <name>payops::EvidencePage</name>
    <message>
        <location filename="../../ui/pages/evidencepage.cpp" line="+45"/>
        <source>Show evidence</source>
        <translation>查看证据</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>order id or number</source>
        <translation>订单 ID 或订单号</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Pick an order on the state machine or duplicates page, or type its id or, for a gateway&apos;s order, its number.</source>
        <translation>在状态机页或重复发放页选择一个订单，或输入订单 ID；网关的订单输入其订单号。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>Events</source>
        <translation>事件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Callbacks as received</source>
        <translation>收到的回调原文</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>Reading the evidence</source>
        <translation>正在读取证据</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Order %1 does not exist.</source>
        <translation>订单 %1 不存在。</translation>
    </message>
    <message numerus="yes">
        <location line="+10"/>
        <source>&lt;b&gt;Order %1&lt;/b&gt; · the team&apos;s own, taken by a gateway · %n callback(s), the first pay_no %2</source>
        <translation>
            <numerusform>&lt;b&gt;订单 %1&lt;/b&gt; · 团队自己的订单，由网关接收 · %n 条回调，第一条 pay_no %2</numerusform>
        </translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&lt;b&gt;Order %1&lt;/b&gt; · user %2 · %3 · ¥%4 · pay_no %5 · created %6 UTC</source>
        <translation>&lt;b&gt;订单 %1&lt;/b&gt; · 用户 %2 · %3 · ¥%4 · pay_no %5 · 创建于 %6 UTC</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Nothing wrong found: no payment was handed to the team&apos;s handler with success more than once.</source>
        <translation>未发现问题：没有任何一笔支付被团队的处理器以成功应答接收超过一次。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Nothing wrong found: one payment, and no side effect with a second live copy.</source>
        <translation>未发现问题：只有一笔支付，没有任何副作用存在第二份有效副本。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Nothing wrong found: every lock was released after its commit and no side effect was issued twice.</source>
        <translation>未发现问题：每把锁都在事务提交之后释放，没有副作用被重复发放。</translation>
    </message>
    <message numerus="yes">
        <location line="+26"/>
        <source>Callback %1 · pay_no %2 · %3 · %4, forwarded %n time(s)</source>
        <translation>
            <numerusform>回调 %1 · pay_no %2 · %3 · %4，已转发 %n 次</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Callback %1 · pay_no %2 · %3 · %4</source>
        <translation>回调 %1 · pay_no %2 · %3 · %4</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Callbacks as received (%1)</source>
        <translation>收到的回调原文（%1）</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>The team&apos;s own tables keep no callback as received; payops&apos;s callbacks for this order, if any, are among the events.</source>
        <translation>团队自己的表不保存收到的原始回调；payops 自己记录的该订单回调（如有）列在事件中。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No callback was logged for this order.</source>
        <translation>此订单没有记录任何回调。</translation>
    </message>
</context>
<context>
    <name>payops::FindingModel</name>
    <message>
        <location filename="../../ui/models/findingmodel.cpp" line="+18"/>
        <source>漏单 · not with us</source>
        <translation>漏单 · 我方无记录</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>多单 · not on the platform</source>
        <translation>多单 · 平台无记录</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Amount differs</source>
        <translation>金额不符</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Status differs</source>
        <translation>状态不符</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Listed twice</source>
        <translation>平台重复记录</translation>
    </message>
    <message>
        <location line="+70"/>
        <source>Listed %1 times</source>
        <translation>平台重复记录 %1 次</translation>
    </message>
    <message>
        <location line="-68"/>
        <source>Paid twice · refund owed</source>
        <translation>重复支付 · 应退款</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>The platform took the money and we never applied it: check the order&apos;s evidence, then draft the payment for an operator to confirm.</source>
        <translation>平台已收款，我方却从未入账：先查看该订单的证据，再起草这笔支付，交由运维确认。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>We applied a payment the platform does not list for this period: ask the platform before shipping anything more on it.</source>
        <translation>我方入账了一笔平台本期对账单中没有的支付：在继续据此发货之前，先向平台核实。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The platform took another amount than the order&apos;s: the difference is owed one way or the other.</source>
        <translation>平台收取的金额与订单金额不一致：差额需要多退少补。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The platform refunded or closed what we hold as paid, or the other way round: bring the order in line.</source>
        <translation>平台已退款或关闭的交易，我方记为已支付，或者反过来：请将订单状态调整一致。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The platform lists one payment twice: raise it with the platform before settling.</source>
        <translation>平台将同一笔支付列了两次：结算前请向平台提出。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The order was paid by two payments and the second was refused: refund it to the customer.</source>
        <translation>该订单被支付了两次，第二笔被拒绝：请将其退还给客户。</translation>
    </message>
    <message>
        <location line="+81"/>
        <source>Finding</source>
        <translation>问题</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>pay_no</source>
        <translation>pay_no</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Platform amount</source>
        <translation>平台金额</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Our amount</source>
        <translation>我方金额</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Line</source>
        <translation>行号</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Platform status</source>
        <translation>平台状态</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Order status</source>
        <translation>订单状态</translation>
    </message>
</context>
<context>
    <name>payops::FindingsNotifier</name>
    <message>
        <location filename="../../ui/widgets/findingsnotifier.cpp" line="+20"/>
        <source>payops console</source>
        <translation>payops 控制台</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Show the findings</source>
        <translation>查看发现的问题</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>New findings in inspection %1: %2.</source>
        <translation>巡检 %1 发现新问题：%2。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>payops: new findings</source>
        <translation>payops：发现新问题</translation>
    </message>
</context>
<context>
    <name>payops::HttpServer</name>
    <message>
        <location filename="../../app/service/httpserver.cpp" line="+452"/>
        <location line="+7"/>
        <location line="+12"/>
        <source>cannot listen on %1:%2: %3</source>
        <translation>无法监听 %1:%2：%3</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>cannot listen on %1:%2: the address is already in use</source>
        <translation>无法监听 %1:%2：地址已被占用</translation>
    </message>
    <message>
        <location line="+56"/>
        <source>the HTTP server did not start (see the log)</source>
        <translation>HTTP 服务未能启动（见日志）</translation>
    </message>
</context>
<context>
    <name>payops::IncidentReport</name>
    <message>
        <location filename="../../app/report/incidentreport.cpp" line="+293"/>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <location line="-196"/>
        <location line="+203"/>
        <source>Incident report</source>
        <translation>事故报告</translation>
    </message>
    <message>
        <location line="-201"/>
        <source>Database &lt;b&gt;%1&lt;/b&gt;, window %2 to %3 UTC (the end excluded).</source>
        <translation>数据库 &lt;b&gt;%1&lt;/b&gt;，时间窗口 %2 至 %3 UTC（不含结束时刻）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Read at %1 UTC. Points are valued at %2 points to the yuan.</source>
        <translation>读取于 %1 UTC。积分按 %2 积分折合 1 元计价。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Totals</source>
        <translation>汇总</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Extra copies issued in the window</source>
        <translation>时间窗口内发放的多余份数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 (%2 coupons, %3 points rows) on %4 orders</source>
        <translation>%1 份（优惠券 %2 张，积分记录 %3 条），涉及 %4 个订单</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Value of the extra copies</source>
        <translation>多余份数的价值</translation>
    </message>
    <message>
        <location line="+0"/>
        <location line="+2"/>
        <source>¥ %1</source>
        <translation>¥ %1</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>Money at risk now (extra copies still live)</source>
        <translation>当前风险金额（仍有效的多余份数）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compensated</source>
        <translation>已补偿</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>¥ %1 (%2 copies)</source>
        <translation>¥ %1（%2 份）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Timeline</source>
        <translation>时间线</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>the first extra copy is issued (order %1)</source>
        <translation>首次发放多余份数（订单 %1）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the last extra copy in the window is issued</source>
        <translation>时间窗口内最后一次发放多余份数</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the switch flips from %1 to %2 (version %3) by &lt;b&gt;%4&lt;/b&gt;: %5</source>
        <translation>&lt;b&gt;%4&lt;/b&gt; 将降级开关从 %1 切换为 %2（版本 %3）：%5</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&lt;b&gt;%1&lt;/b&gt; compensates %2 copies, ¥ %3</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; 补偿 %2 份，¥ %3</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>No extra copy was issued and the switch did not flip in the window.</source>
        <translation>时间窗口内没有发放多余份数，降级开关也未切换。</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+132"/>
        <source>UTC</source>
        <translation>UTC</translation>
    </message>
    <message>
        <location line="-132"/>
        <source>what happened</source>
        <translation>事件</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The switch did not flip in the window.</source>
        <translation>时间窗口内降级开关未切换。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The switch is %1 now.</source>
        <translation>降级开关当前为 %1。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compensation</source>
        <translation>补偿</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>None of the window&apos;s extra copies has been compensated.</source>
        <translation>时间窗口内的多余份数均未补偿。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>when (UTC)</source>
        <translation>时间（UTC）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>by</source>
        <translation>操作人</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>actions</source>
        <translation>操作数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>amount (¥)</source>
        <translation>金额（¥）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ticket</source>
        <translation>工单</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 to %2</source>
        <translation>%1 至 %2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Reconciliation</source>
        <translation>对账</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>No reconciliation with a platform statement was started in the window.</source>
        <translation>时间窗口内未发起与平台对账单的对账。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Run %1, started %2 UTC by &lt;b&gt;%3&lt;/b&gt;%4: the %5 statement &lt;i&gt;%6&lt;/i&gt; of channel %7, period %8 to %9 UTC, %10 lines (%11 unreadable).</source>
        <translation>对账批次 %1，由 &lt;b&gt;%3&lt;/b&gt; 于 %2 UTC 发起%4：渠道 %7 的 %5 对账单 &lt;i&gt;%6&lt;/i&gt;，账期 %8 至 %9 UTC，共 %10 行（%11 行无法解析）。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source> (it did not finish)</source>
        <translation>（未完成）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>finding</source>
        <translation>问题</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>count</source>
        <translation>数量</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;b&gt;all findings&lt;/b&gt;</source>
        <translation>&lt;b&gt;全部问题&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Audit chain</source>
        <translation>审计链</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Head at entry %1, hash:</source>
        <translation>链头位于第 %1 条，哈希：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The head names the log&apos;s newest entry and its hash. Keep this hash elsewhere: &lt;tt&gt;payops audit verify&lt;/tt&gt; prints it again for the whole chain, and any entry edited or removed since would change it.</source>
        <translation>链头指明审计日志中最新的一条记录及其哈希。请另行保存此哈希：&lt;tt&gt;payops audit verify&lt;/tt&gt; 校验整条链后会再次输出它，此后任何记录被修改或删除都会使它改变。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&lt;b&gt;The head does not match the log&apos;s newest entry: run &lt;tt&gt;payops audit verify&lt;/tt&gt;.&lt;/b&gt;</source>
        <translation>&lt;b&gt;链头与审计日志中最新的记录不一致：请运行 &lt;tt&gt;payops audit verify&lt;/tt&gt;。&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Charts</source>
        <translation>图表</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>minute</source>
        <translation>1 分钟</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 minutes</source>
        <translation>%1 分钟</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Bars per %1, UTC. Dashed lines: the switch flipping to RECORD_ONLY (orange) and back to NORMAL (green).</source>
        <translation>每根柱代表 %1（UTC）。虚线：降级开关切换到 RECORD_ONLY（橙色）和切回 NORMAL（绿色）。</translation>
    </message>
    <message>
        <location line="+100"/>
        <source>Extra copies issued</source>
        <translation>发放的多余份数</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Callbacks received by the instances</source>
        <translation>各实例收到的回调</translation>
    </message>
</context>
<context>
    <name>payops::InspectionChart</name>
    <message>
        <location filename="../../ui/widgets/inspectionchart.cpp" line="+36"/>
        <source>Findings per inspection</source>
        <translation>每次巡检发现的问题</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Open duplicate groups</source>
        <translation>未处理的重复组</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Unmatched callbacks</source>
        <translation>未匹配回调</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Orders paid twice (refunds owed)</source>
        <translation>重复支付的订单（应退款）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>UTC</source>
        <translation>UTC</translation>
    </message>
</context>
<context>
    <name>payops::InspectionPage</name>
    <message>
        <location filename="../../ui/pages/inspectionpage.cpp" line="+50"/>
        <source>Inspect now</source>
        <translation>立即巡检</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Select a run to read its findings.</source>
        <translation>选择一次巡检以查看发现的问题。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>The inspection failed: %1</source>
        <translation>巡检失败：%1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Inspecting…</source>
        <translation>正在巡检…</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>&lt;b&gt;This console inspects every %1 minute(s)&lt;/b&gt; and stores each run; new findings raise a desktop notification.</source>
        <translation>&lt;b&gt;本控制台每 %1 分钟巡检一次&lt;/b&gt;，并保存每次结果；发现新问题时弹出桌面通知。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&lt;b&gt;No schedule in this console.&lt;/b&gt; Set one in File → Settings (Run the inspection every), or run payops inspect from cron; each run is listed here.</source>
        <translation>&lt;b&gt;本控制台未设置定时巡检。&lt;/b&gt;可在“文件 → 设置”中设置巡检间隔，或用 cron 运行 payops inspect；每次巡检都会列在这里。</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>The first count of duplicates is at %1 %; the inspection runs once it is done.</source>
        <translation>重复的首次计数已完成 %1%；完成后即开始巡检。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Last run: clean.</source>
        <translation>上次巡检：无问题。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Last run: findings.</source>
        <translation>上次巡检：发现问题。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Stored as run %1.</source>
        <translation>已保存，编号 %1。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Not stored: %1</source>
        <translation>未保存：%1</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Run %1, %2 UTC, from %3 by %4: %5.</source>
        <translation>巡检 %1，%2 UTC，来源 %3，执行者 %4：%5。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>clean</source>
        <translation>无问题</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>findings</source>
        <translation>发现问题</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Duplicate side effects: %1 open group(s), %2 extra copies, %3 yuan at risk; orders %4. Compensate them from the duplicates page.</source>
        <translation>重复发放：%1 组未补偿，多余 %2 份，风险金额 %3 元；订单 %4。请在“重复发放”页进行补偿。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Duplicate side effects: none open.</source>
        <translation>重复发放：无未补偿项。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>  %1: %2 open group(s), %3 extra copies, %4 yuan.</source>
        <translation>  %1：%2 个未处理组，%3 份多余副本，%4 元。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Late payments: %1 unmatched callback(s) whose order exists now, %2 yuan to apply. Drain them on the backlog page.</source>
        <translation>迟到的支付：%1 条未匹配回调的订单现已存在，待入账 %2 元。请在“积压回调”页回放。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Unmatched callbacks: %1 (%2 still without their order).</source>
        <translation>未匹配回调：%1 条（其中 %2 条仍无对应订单）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Paid twice by the customer: %1 order(s), %2 second payment(s), %3 yuan to refund; orders %4. Refund each second payment through its platform.</source>
        <translation>客户重复支付：%1 个订单，%2 笔重复支付，应退款 %3 元；订单 %4。请通过各自的支付平台逐笔退款。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Paid twice by the customer: none.</source>
        <translation>客户重复支付：无。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Backlog: %1 recorded callback(s).</source>
        <translation>积压回调：已记录 %1 条。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Switch: %1 (version %2).</source>
        <translation>降级开关：%1（版本 %2）。</translation>
    </message>
</context>
<context>
    <name>payops::InspectionRunModel</name>
    <message>
        <location filename="../../ui/models/inspectionrunmodel.cpp" line="+33"/>
        <source>console</source>
        <translation>控制台</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>command line</source>
        <translation>命令行</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Clean</source>
        <translation>无问题</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Findings</source>
        <translation>有问题</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 (¥%2)</source>
        <translation>%1（¥%2）</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Run</source>
        <translation>编号</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Started (UTC)</source>
        <translation>开始时间（UTC）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>From</source>
        <translation>来源</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Who (database account)</source>
        <translation>执行人（数据库账号）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Duplicate groups</source>
        <translation>重复组</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Late payments / unmatched</source>
        <translation>迟到支付 / 未匹配</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Refunds owed (orders)</source>
        <translation>应退款（订单数）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Backlog</source>
        <translation>积压回调</translation>
    </message>
</context>
<context>
    <name>payops::InstanceModel</name>
    <message>
        <location filename="../../ui/models/instancemodel.cpp" line="+76"/>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>alive</source>
        <translation>存活</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>stale (%1 s)</source>
        <translation>失联（%1 秒）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>gateway → %1</source>
        <translation>网关 → %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>unsafe-demo ⚠ releases lock before commit</source>
        <translation>unsafe-demo ⚠ 提交前释放锁</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>v%1 (current)</source>
        <translation>v%1（当前）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>v%1 of v%2 — behind</source>
        <translation>v%1（最新 v%2）— 落后</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>asking …</source>
        <translation>查询中 …</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>not asked (not alive)</source>
        <translation>未查询（未存活）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1, db %2</source>
        <translation>%1，数据库 %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>unreachable: %1</source>
        <translation>无法访问：%1</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>unknown, not checked yet</source>
        <translation>未知，尚未检查</translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source>%n s ago</source>
        <translation>
            <numerusform>%n 秒前</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n min ago</source>
        <translation>
            <numerusform>%n 分钟前</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n h ago</source>
        <translation>
            <numerusform>%n 小时前</numerusform>
        </translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ok, checked %1</source>
        <translation>正常，检查于 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>failing, checked %1</source>
        <translation>失败，检查于 %1</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>Gateway mode: pays nothing itself; records each callback and forwards it, exactly once, to the team&apos;s own handler (the upstream).</source>
        <translation>网关模式：自身不执行支付；记录每个回调，并将其恰好一次转发给团队自己的处理器（上游）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>ok: the gateway&apos;s last forward to its upstream got an answer; failing: it got none; unknown: nothing forwarded yet. From the gateway&apos;s heartbeat.</source>
        <translation>正常：网关最近一次向上游的转发得到了应答；失败：没有得到应答；未知：尚未转发过。来自网关的心跳。</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Instance</source>
        <translation>实例</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Handler</source>
        <translation>处理器</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Upstream</source>
        <translation>上游</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Switch mode</source>
        <translation>开关模式</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Switch applied</source>
        <translation>开关版本</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Callbacks/s</source>
        <translation>回调/秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>/healthz</source>
        <translation>/healthz</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Listen</source>
        <translation>监听地址</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Last seen (UTC)</source>
        <translation>最近心跳（UTC）</translation>
    </message>
</context>
<context>
    <name>payops::InstancesPage</name>
    <message>
        <location filename="../../ui/pages/instancespage.cpp" line="+54"/>
        <source>Alive: a heartbeat within %1 s and not stopped. Callbacks per second come from two successive scrapes of /metrics.</source>
        <translation>存活：%1 秒内有心跳且未停止。每秒回调数取自相邻两次抓取的 /metrics。</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>&lt;b&gt;%1 of %2 instances alive.&lt;/b&gt; Switch: %3, version %4.</source>
        <translation>&lt;b&gt;%2 个实例中 %1 个存活。&lt;/b&gt;开关：%3，版本 %4。</translation>
    </message>
    <message numerus="yes">
        <location line="+6"/>
        <source>%n of them in gateway mode, forwarding to an upstream.</source>
        <translation>
            <numerusform>其中 %n 个为网关模式，转发给上游。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+4"/>
        <source>%n gateway(s) get no answer from their upstream.</source>
        <translation>
            <numerusform>%n 个网关得不到上游的应答。</numerusform>
        </translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 alive instance(s) run the unsafe demo handler.</source>
        <translation>%1 个存活实例在运行不安全的演示处理器。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 instance(s) have not applied the current switch version.</source>
        <translation>%1 个实例尚未应用当前开关版本。</translation>
    </message>
</context>
<context>
    <name>payops::LiveDuplicateCount</name>
    <message>
        <location filename="../../app/domain/money/duplicates/duplicatecount.cpp" line="+14"/>
        <source>%1 duplicate coupon group(s) (%2 extra row(s)) in user_coupon by (order_id, coupon_template_id)</source>
        <translation>user_coupon 中按 (order_id, coupon_template_id) 有 %1 组重复优惠券（多余 %2 行）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 duplicate points group(s) (%2 extra row(s)) in point_log by (order_id, point_type)</source>
        <translation>point_log 中按 (order_id, point_type) 有 %1 组重复积分（多余 %2 行）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>no live duplicates</source>
        <translation>没有未处理的重复记录</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1; e.g. order(s) %2</source>
        <translation>%1；例如订单 %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>&apos;%1&apos; is not a requirement this program knows</source>
        <translation>“%1”不是本程序认识的前提条件</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>the side-effect keys cannot be added while live duplicates remain: %1. Compensate them first (payops compensate), then migrate again.</source>
        <translation>仍有未处理的重复记录，无法添加副作用幂等键：%1。请先补偿（payops compensate），再重新迁移。</translation>
    </message>
</context>
<context>
    <name>payops::LiveTrafficChart</name>
    <message>
        <location filename="../../ui/widgets/livetrafficchart.cpp" line="+62"/>
        <source>The last 15 minutes</source>
        <translation>最近 15 分钟</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>UTC</source>
        <translation>UTC</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>callbacks / s</source>
        <translation>回调 / 秒</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>duplicates / min</source>
        <translation>重复发放 / 分钟</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>callbacks per second</source>
        <translation>每秒回调数</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>duplicate side effects per minute</source>
        <translation>每分钟重复发放数</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>switch → RECORD_ONLY</source>
        <translation>开关 → RECORD_ONLY</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>switch → NORMAL</source>
        <translation>开关 → NORMAL</translation>
    </message>
    <message>
        <location line="+75"/>
        <source>%1 deliveries in the last minute, copies included · %2 duplicate side effects made in the window</source>
        <translation>最近一分钟投递 %1 次（含重复投递）· 时间窗口内产生重复发放 %2 次</translation>
    </message>
    <message>
        <location line="+5"/>
        <source> · switch set to %1 at %2 UTC by %3</source>
        <translation> · 开关于 %2 UTC 由 %3 切换为 %1</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Live chart not updated: %1</source>
        <translation>实时图表未更新：%1</translation>
    </message>
</context>
<context>
    <name>payops::LocalServer</name>
    <message>
        <location filename="../../app/lab/localserver.cpp" line="+36"/>
        <source>%1 not found; install the mariadb-server package (script/bootstrap does)</source>
        <translation>找不到 %1，请安装 mariadb-server 软件包（script/bootstrap 会安装）</translation>
    </message>
    <message>
        <location line="+113"/>
        <source>user id %1 has no name in the password database; the local server&apos;s administrator is named after it</source>
        <translation>用户 ID %1 在密码数据库中没有名字；本地服务器的管理员账号以它命名</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>pid file (pid %1 is not running) and socket file left by a server that ended abnormally</source>
        <translation>异常退出的服务器留下的 pid 文件（pid %1 未在运行）和 socket 文件</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>pid file (pid %1 is not running) left by a server that ended abnormally</source>
        <translation>异常退出的服务器留下的 pid 文件（pid %1 未在运行）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>socket file left by a server that ended abnormally</source>
        <translation>异常退出的服务器留下的 socket 文件</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>creating a new MariaDB data directory in %1</source>
        <translation>正在 %1 中创建新的 MariaDB 数据目录</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>mariadb-install-db failed in %1:
%2</source>
        <translation>mariadb-install-db 在 %1 中失败：
%2</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>the MariaDB server in %1 exited during start-up:
%2</source>
        <translation>%1 中的 MariaDB 服务器在启动时退出：
%2</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>the MariaDB server in %1 did not accept connections within %2 s:
%3</source>
        <translation>%1 中的 MariaDB 服务器在 %2 秒内没有接受连接：
%3</translation>
    </message>
    <message>
        <location line="+58"/>
        <source>cannot create %1</source>
        <translation>无法创建 %1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>cannot make %1 private to its owner (mode 0700)</source>
        <translation>无法将 %1 设为仅属主可用（权限 0700）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>another start of the server in %1 is in progress</source>
        <translation>%1 中的服务器正在由另一个进程启动</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>recovering: removing the %1</source>
        <translation>正在恢复：删除%1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>the directory %1 is too long for a unix socket path; choose a shorter one with --dir</source>
        <translation>目录 %1 太长，不能用作 unix socket 路径；请用 --dir 指定一个更短的目录</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>starting MariaDB in %1</source>
        <translation>正在 %1 中启动 MariaDB</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>cannot run %1</source>
        <translation>无法运行 %1</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>no OS user %1 to run the server as</source>
        <translation>没有可用来运行服务器的系统用户 %1</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>cannot give %1 to the OS user %2</source>
        <translation>无法把 %1 交给系统用户 %2</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>the MariaDB server (pid %1) did not stop within %2 s; see %3</source>
        <translation>MariaDB 服务器（pid %1）未在 %2 秒内停止，见 %3</translation>
    </message>
</context>
<context>
    <name>payops::MainWindow</name>
    <message>
        <location filename="../../ui/mainwindow.cpp" line="+42"/>
        <source>payops console</source>
        <translation>payops 控制台</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Retry now</source>
        <translation>立即重试</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Not connected. File → Connect… opens the connection dialog; payops-console --db mysql://USER@HOST/DB skips it.</source>
        <translation>未连接。“文件 → 连接…”打开连接对话框；用 payops-console --db mysql://USER@HOST/DB 启动可跳过此步。</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>&amp;Connect…</source>
        <translation>连接(&amp;C)…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Refresh</source>
        <translation>刷新(&amp;R)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Incident re&amp;port…</source>
        <translation>事故报告(&amp;P)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A PDF of one time window, the same as payops report writes.</source>
        <translation>生成某一时间窗口的 PDF，与 payops report 输出的相同。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>no database</source>
        <translation>未连接数据库</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>%1 · tables of %2</source>
        <translation>%1 · 表由 %2 描述</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>reading from %1 …</source>
        <translation>正在从 %1 读取…</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>replica unreadable: %1</source>
        <translation>无法读取从库：%1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>checking grants …</source>
        <translation>正在检查权限…</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>switch</source>
        <translation>切换开关</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>drain</source>
        <translation>回放</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>compensate</source>
        <translation>补偿</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>approve</source>
        <translation>批准</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 · read only</source>
        <translation>%1 · 只读</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 · may %2</source>
        <translation>%1 · 可执行：%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Probed from the database&apos;s own grants; actions it does not allow are disabled, and the database would refuse them anyway.</source>
        <translation>根据数据库自身的授权探测；不允许的操作已禁用，即使执行，数据库也会拒绝。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>grants unknown: %1</source>
        <translation>权限未知：%1</translation>
    </message>
    <message>
        <location line="+59"/>
        <source>Connect to a database first: the report is read from it.</source>
        <translation>请先连接数据库：报告数据从数据库读取。</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Connection to the database lost: %1. Retrying in %2 s — everything on screen is kept.</source>
        <translation>与数据库的连接已断开：%1。%2 秒后重试——屏幕上的内容全部保留。</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Connection restored.</source>
        <translation>连接已恢复。</translation>
    </message>
    <message>
        <location filename="../../ui/pages/pagetable.cpp" line="+32"/>
        <source>Overview</source>
        <translation>总览</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>State machine</source>
        <translation>订单状态机</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Duplicates</source>
        <translation>重复发放</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Order evidence</source>
        <translation>订单证据</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Instances</source>
        <translation>实例</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Backlog</source>
        <translation>积压回调</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Compensation</source>
        <translation>补偿</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Audit log</source>
        <translation>审计日志</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Defences</source>
        <translation>防护措施</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Simulation</source>
        <translation>模拟</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Inspections</source>
        <translation>巡检</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Reconciliation</source>
        <translation>对账</translation>
    </message>
</context>
<context>
    <name>payops::MappedCompensationDialog</name>
    <message>
        <location filename="../../ui/dialogs/mappedcompensationdialog.cpp" line="+28"/>
        <source>Compensate duplicates on the team&apos;s tables</source>
        <translation>补偿团队表上的重复发放</translation>
    </message>
    <message>
        <location line="+55"/>
        <location line="+167"/>
        <source>Compensate…</source>
        <translation>补偿…</translation>
    </message>
    <message>
        <location line="-202"/>
        <source>Scope: &lt;b&gt;%1&lt;/b&gt;, through the mapping %2</source>
        <translation>范围：&lt;b&gt;%1&lt;/b&gt;，通过映射 %2</translation>
    </message>
    <message>
        <location line="-21"/>
        <source>Approve compensation request %1</source>
        <translation>批准补偿申请 %1</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>Request &lt;b&gt;%1&lt;/b&gt; by &lt;b&gt;%2&lt;/b&gt; at %3 UTC asks for %4 on the team&apos;s tables, through the mapping %5: %6 row(s) to freeze, %7 to reverse. Its reason: %8 (ticket %9). Below is what it covers now; an approval is refused if that is not the amount asked.</source>
        <translation>申请 &lt;b&gt;%1&lt;/b&gt; 由 &lt;b&gt;%2&lt;/b&gt; 于 %3 UTC 提交，通过映射 %5 在团队的表上申请 %4：冻结 %6 行，冲正 %7 行。原因：%8（工单 %9）。下面是它当前涵盖的内容；若与申请金额不符，批准将被拒绝。</translation>
    </message>
    <message>
        <location line="+46"/>
        <source>Stop after this batch</source>
        <translation>本批完成后停止</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Stopping after the current batch …</source>
        <translation>当前批次完成后停止…</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Planning the dry run … nothing is changed.</source>
        <translation>正在规划试运行…不会做任何修改。</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>%1 points</source>
        <translation>%1 积分</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>frozen</source>
        <translation>已冻结</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>to freeze</source>
        <translation>待冻结</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>reversed</source>
        <translation>已冲正</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>to reverse</source>
        <translation>待冲正</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 left to finance</source>
        <translation>%1 份留给财务</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>&lt;b&gt;Nothing to compensate:&lt;/b&gt; no live duplicate in this scope.</source>
        <translation>&lt;b&gt;无需补偿：&lt;/b&gt;此范围内没有未补偿的重复发放。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>On %1 order(s); &lt;b&gt;%2&lt;/b&gt; frozen or reversed in all (points at %3 = ¥1). A copy already used is never touched: finance decides.</source>
        <translation>涉及 %1 个订单；共冻结或冲正 &lt;b&gt;%2&lt;/b&gt;（积分按 %3 = ¥1）。已使用的副本绝不改动：由财务决定。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Dry run: nothing has been changed. The first copy of each duplicate stays; nothing is deleted.</source>
        <translation>试运行：未做任何修改。每组重复保留第一份，不删除任何记录。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The duplicates changed since the request was made (%1 now, %2 asked): an approval will be refused; ask for a new request.</source>
        <translation>提交申请后重复发放已有变化（当前 %1，申请 %2）：批准将被拒绝，请重新提交申请。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1, with the %2 this account compensated alone in the four-eyes window, is above the threshold of %3: this files a request that another operator account approves on the Compensation page, with this same mapping; nothing is compensated until then.</source>
        <translation>%1 加上该账号在双人复核时间窗内已单独补偿的 %2，超过阈值 %3：这将提交一个申请，由另一位运维账号在“补偿”页面用同一个映射批准；在此之前不会补偿任何内容。</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Approve and compensate…</source>
        <translation>批准并补偿…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Request approval…</source>
        <translation>申请批准…</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Needs a preview with something to do, a reason and a ticket.</source>
        <translation>需要先有可执行内容的预览，并填写原因和工单。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1&lt;p&gt;on %2 order(s): &lt;b&gt;%3&lt;/b&gt; in all. Reason: &lt;b&gt;%4&lt;/b&gt;, ticket &lt;b&gt;%5&lt;/b&gt;.&lt;/p&gt;</source>
        <translation>%1&lt;p&gt;涉及 %2 个订单：共 &lt;b&gt;%3&lt;/b&gt;。原因：&lt;b&gt;%4&lt;/b&gt;，工单 &lt;b&gt;%5&lt;/b&gt;。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>&lt;h3&gt;File a request for another operator?&lt;/h3&gt;&lt;p&gt;When approved through this same mapping, it will, on the team&apos;s tables:&lt;/p&gt;%1&lt;p&gt;Nothing changes until another operator account approves it.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;提交申请给另一位运维人员？&lt;/h3&gt;&lt;p&gt;通过同一个映射批准后，它将在团队的表上：&lt;/p&gt;%1&lt;p&gt;在另一位运维账号批准之前，不会有任何改动。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>File the request</source>
        <translation>提交申请</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;h3&gt;%1&lt;/h3&gt;&lt;p&gt;This will, on the team&apos;s tables:&lt;/p&gt;%2&lt;p&gt;Each copy is one row in &lt;tt&gt;mapped_compensation&lt;/tt&gt; and one audit entry with the mapping&apos;s SHA-256 under your database account. Nothing is deleted.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;%1&lt;/h3&gt;&lt;p&gt;这将在团队的表上：&lt;/p&gt;%2&lt;p&gt;每份副本在 &lt;tt&gt;mapped_compensation&lt;/tt&gt; 中记一行，并以您的数据库账号写一条带映射 SHA-256 的审计记录。不删除任何记录。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Approve request %1 and compensate?</source>
        <translation>批准申请 %1 并补偿？</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compensate now?</source>
        <translation>立即补偿？</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Not approved.</source>
        <translation>未批准。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&lt;b&gt;Request %1 is filed.&lt;/b&gt;</source>
        <translation>&lt;b&gt;申请 %1 已提交。&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>It waits for another operator account to approve it on the Compensation page, with the same mapping file. Nothing has been compensated yet.</source>
        <translation>它等待另一位运维账号在“补偿”页面用同一个映射文件批准。目前尚未补偿任何内容。</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>&lt;br&gt;Request %1 is approved%2.</source>
        <translation>&lt;br&gt;申请 %1 已批准%2。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> and executed</source>
        <translation>并已执行</translation>
    </message>
    <message>
        <location line="-71"/>
        <source>Compensate now</source>
        <translation>立即补偿</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Approve and compensate now</source>
        <translation>批准并立即补偿</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Compensating …</source>
        <translation>正在补偿…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Filing the request …</source>
        <translation>正在提交申请…</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Compensating … %1 of %2 copies</source>
        <translation>正在补偿… 第 %1 / %2 份</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>&lt;b&gt;Stopped.&lt;/b&gt; What was done stays done; a new run finishes the rest.</source>
        <translation>&lt;b&gt;已停止。&lt;/b&gt;已完成的部分保持有效；重新运行即可完成其余部分。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Done.&lt;/b&gt;</source>
        <translation>&lt;b&gt;完成。&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Skipped %1 (compensated by someone else meanwhile, or changed since the preview).&lt;br&gt;Batch &lt;tt&gt;%2&lt;/tt&gt;.</source>
        <translation>跳过 %1 份（期间已被他人补偿，或自预览后已变化）。&lt;br&gt;批次 &lt;tt&gt;%2&lt;/tt&gt;。</translation>
    </message>
</context>
<context>
    <name>payops::MappedGroupModel</name>
    <message>
        <location filename="../../ui/models/mappedgroupmodel.cpp" line="+15"/>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Side effect</source>
        <translation>副作用</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Live copies</source>
        <translation>有效副本</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>One copy</source>
        <translation>单份价值</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>At risk</source>
        <translation>风险金额</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>First issued</source>
        <translation>首次发放</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Last issued</source>
        <translation>最后发放</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>%1 points</source>
        <translation>%1 积分</translation>
    </message>
</context>
<context>
    <name>payops::MappingCheckBar</name>
    <message>
        <location filename="../../ui/widgets/mappingcheckbar.cpp" line="+51"/>
        <source>Details…</source>
        <translation>详情…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Check again</source>
        <translation>重新检查</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Checking the mapping against the team&apos;s tables…</source>
        <translation>正在对照团队自己的表检查映射…</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Mapping check cancelled: figures from the team&apos;s tables are unchecked.</source>
        <translation>映射检查已取消：来自团队表的数字未经检查。</translation>
    </message>
    <message>
        <location line="-10"/>
        <source>Mapping not checked: %1</source>
        <translation>映射未检查：%1</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>Mapping has 1 error: figures from the team&apos;s tables may be wrong.</source>
        <translation>映射有 1 个错误：来自团队表的数字可能有误。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mapping has %1 errors: figures from the team&apos;s tables may be wrong.</source>
        <translation>映射有 %1 个错误：来自团队表的数字可能有误。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Mapping OK with 1 warning</source>
        <translation>映射可用，有 1 个警告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mapping OK with %1 warnings</source>
        <translation>映射可用，有 %1 个警告</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Mapping OK</source>
        <translation>映射可用</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Mapping check</source>
        <translation>映射检查</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 on this database:</source>
        <translation>%1 在此数据库上：</translation>
    </message>
</context>
<context>
    <name>payops::MissingPayment</name>
    <message>
        <location filename="../../app/domain/callback/missingpayment.cpp" line="+32"/>
        <source>no missing-payment draft %1</source>
        <translation>不存在漏单草稿 %1</translation>
    </message>
</context>
<context>
    <name>payops::OrderModel</name>
    <message>
        <location filename="../../ui/models/ordermodel.cpp" line="+56"/>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Amount (¥)</source>
        <translation>金额（¥）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Pay no</source>
        <translation>支付流水号</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Created (UTC)</source>
        <translation>创建时间（UTC）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Paid (UTC)</source>
        <translation>支付时间（UTC）</translation>
    </message>
</context>
<context>
    <name>payops::OverviewPage</name>
    <message>
        <location filename="../../ui/pages/overviewpage.cpp" line="+53"/>
        <source>Callback endpoint mode</source>
        <translation>回调接口模式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Payments, last minute</source>
        <translation>最近一分钟支付数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Duplicate side effects (open)</source>
        <translation>重复发放（未补偿）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Backlog of recorded callbacks</source>
        <translation>积压回调（已记录）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Money at risk</source>
        <translation>风险金额</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Callback instances alive</source>
        <translation>存活的回调实例</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>The live chart of callbacks and duplicates reads payops&apos;s own tables: it is not shown on the team&apos;s tables. The tiles above come from the mapped duplicate watch.</source>
        <translation>回调与重复发放的实时图表读取的是 payops 自己的表：在团队的表上不显示。上方的磁贴来自映射的重复发放监视。</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>Connecting …</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <location line="+47"/>
        <source>These figures are stale: %1. Actions still run on the primary, and a compensation is planned there again before it runs.</source>
        <translation>这些数字已过时：%1。操作仍在主库上执行，补偿在执行前会在主库上重新规划。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Refreshing</source>
        <translation>正在刷新</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Database %1 has no payops schema</source>
        <translation>数据库 %1 中没有 payops 表结构</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run: payops migrate --db %1</source>
        <translation>请运行：payops migrate --db %1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 — sandbox</source>
        <translation>%1 — 沙箱</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 orders created, %2 paid, %3 repeated payments refused</source>
        <translation>新建订单 %1 个，已支付 %2 个，拒绝重复支付 %3 次</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 as %2 · server %3 · schema level %4 · the team&apos;s tables of %5</source>
        <translation>%1，账号 %2 · 服务器 %3 · 架构级别 %4 · %5 中的团队表</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 as %2 · server %3 · schema level %4 · last hour: %5</source>
        <translation>%1（账号 %2）· 服务器 %3 · 表结构级别 %4 · 最近一小时：%5</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The last hour&apos;s orders and transitions, counted by the minute: read once when the page opens, then only what is new at each refresh.</source>
        <translation>最近一小时的订单和状态流转，按分钟计数：页面打开时完整读取一次，之后每次刷新只读取新增部分。</translation>
    </message>
    <message>
        <location line="+5"/>
        <location line="+39"/>
        <location line="+8"/>
        <location line="+47"/>
        <location line="+6"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location line="-99"/>
        <source>switch v%1, set by %2: %3</source>
        <translation>降级开关 v%1，由 %2 设置：%3</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>n/a</source>
        <translation>不适用</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>not available on mapped tables: the team&apos;s payments do not all pass through payops&apos;s callback log</source>
        <translation>映射的表上不可用：团队的支付并不都经过 payops 的回调日志</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>distinct pay_no first received in the last 60 s</source>
        <translation>最近 60 秒内首次收到的不同 pay_no 数</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>&lt;br&gt;&lt;b&gt;Counting for the first time: %1 % of the orders read&lt;/b&gt;, the figures grow until then</source>
        <translation>&lt;br&gt;&lt;b&gt;首次计数中：已读取 %1% 的订单&lt;/b&gt;，完成前数字会持续增长</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>extra copies on %1 orders: %2 coupons, %3 points rows; %4 compensations recorded</source>
        <translation>%1 个订单上的多余份数：优惠券 %2 张，积分记录 %3 条；已记录补偿 %4 次</translation>
    </message>
    <message>
        <location line="-19"/>
        <source>callbacks recorded in RECORD_ONLY mode, waiting to be processed</source>
        <translation>RECORD_ONLY 模式下记录的回调，等待处理</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>%1 unmatched (arrived before their order), %2 of them with their order now</source>
        <translation>%1 条未匹配（早于订单到达），其中 %2 条订单现已存在</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>coupons ¥%1 + points ¥%2 (%3 points = ¥1)</source>
        <translation>优惠券 ¥%1 + 积分 ¥%2（%3 积分 = ¥1）</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>%1 alive instance(s) run the UNSAFE demo handler</source>
        <translation>%1 个存活实例运行着 UNSAFE 演示处理程序</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>heartbeat within %1 s</source>
        <translation>%1 秒内有心跳</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Updated %1 UTC · every %2 s</source>
        <translation>更新于 %1 UTC · 每 %2 秒</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>%1: %2 extra in %3 groups</source>
        <translation>%1：%3 组中多余 %2 份</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 ¥%2</source>
        <translation>%1 ¥%2</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>on %1 orders of the team&apos;s tables&lt;br&gt;%2</source>
        <translation>团队表上的 %1 个订单&lt;br&gt;%2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source> (%1 points = ¥1)</source>
        <translation>（%1 积分 = ¥1）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Cannot read the database</source>
        <translation>无法读取数据库</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Last attempt %1 UTC failed</source>
        <translation>最近一次尝试（%1 UTC）失败</translation>
    </message>
</context>
<context>
    <name>payops::Page</name>
    <message>
        <location filename="../../ui/pages/page.cpp" line="+73"/>
        <source>%1 (waited %2 s): this page shows what the replica had before it, and reads again by itself once the replica has applied it.</source>
        <translation>%1（已等待 %2 秒）：本页显示的是从库在该操作之前的数据，从库应用该操作后本页会自动重新读取。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The replica has not caught up with your last action yet</source>
        <translation>从库尚未跟上您刚才的操作</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>%1: this page may not show your last action yet.</source>
        <translation>%1：本页可能还未显示您刚才的操作。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Could not ask the replica whether it has applied your last action (%1)</source>
        <translation>无法向从库确认是否已应用您刚才的操作（%1）</translation>
    </message>
</context>
<context>
    <name>payops::PaymentApplier</name>
    <message>
        <location filename="../../app/domain/callback/paymentapplier.cpp" line="+100"/>
        <source>order_transition has no pay_success_callback edge into PAID; run payops migrate</source>
        <translation>order_transition 中没有进入 PAID 的 pay_success_callback 转换，请运行 payops migrate</translation>
    </message>
</context>
<context>
    <name>payops::PlatformNotifier</name>
    <message>
        <location filename="../../app/lab/platformnotification.cpp" line="+264"/>
        <source>the keys for %1 lack %2 (payops sandbox start makes them)</source>
        <translation>%1 的密钥缺少 %2（payops sandbox start 会生成它们）</translation>
    </message>
</context>
<context>
    <name>payops::PlaybookDock</name>
    <message>
        <location filename="../../ui/playbook/playbookdock.cpp" line="+41"/>
        <source>Simulate</source>
        <translation>模拟</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Start two instances with the incident&apos;s handler and fire each payment&apos;s callback at both, 40 ms apart. The handler releases its lock before its transaction commits, so the second copy still reads the order as PENDING.</source>
        <translation>用事故时的处理器启动两个实例，把每笔支付的回调分别发给两者，间隔 40 ms。该处理器在事务提交前就释放了锁，所以第二份回调读到的订单仍是 PENDING。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Simulation</source>
        <translation>模拟</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Detect</source>
        <translation>发现</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Watch coupons and points issued twice appear on the overview. The lock, the unique pay_no and the state machine all worked: only the side effects show the damage.</source>
        <translation>在总览上看重复发放的优惠券和积分出现。锁、唯一的 pay_no 和订单状态机都在工作：只有副作用暴露了损失。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Overview</source>
        <translation>总览</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Stop the bleeding</source>
        <translation>止血</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Switch to RECORD_ONLY before looking for the cause: callbacks are only written down and answered 200, so nothing more is paid twice. Done once every live instance confirms the new version.</source>
        <translation>先切换到 RECORD_ONLY，再查原因：回调只记录并返回 200，不会再有重复发放。所有在线实例都确认新版本后，此步完成。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Instances and switch</source>
        <translation>实例与降级开关</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Scope</source>
        <translation>圈定影响面</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Group the side effects by (order, coupon template) and (order, point type): how many orders, how many extra copies, how much money is at risk.</source>
        <translation>按（订单，券模板）和（订单，积分类型）对副作用分组：涉及多少订单、多少多余份数、多少风险金额。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Duplicates</source>
        <translation>重复发放</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Prove the root cause</source>
        <translation>确认根因</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>One affected order&apos;s evidence: the lock released before the commit, and the second callback taking it in between. Not a lock that failed, a lock released too early.</source>
        <translation>一个受影响订单的证据：锁在提交之前释放，第二次回调在这段间隙拿到了锁。不是锁失效，而是锁释放得太早。</translation>
    </message>
    <message>
        <location line="+4"/>
        <location line="+126"/>
        <location line="+200"/>
        <source>Order evidence</source>
        <translation>订单证据</translation>
    </message>
    <message>
        <location line="-325"/>
        <source>Compensate</source>
        <translation>补偿</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Freeze the extra coupons and reverse the extra points, never delete, each act audited. First: the keys of step 7 cannot be built over live duplicates.</source>
        <translation>冻结多余的优惠券、冲正多余的积分，绝不删除，每次操作都记入审计日志。必须先做：存在未补偿的重复发放时，第 7 步的幂等键无法建立。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Compensation</source>
        <translation>补偿</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fix</source>
        <translation>修复</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Defences</source>
        <translation>防护措施</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Drain the backlog</source>
        <translation>回放积压回调</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Resume processing and drain the callbacks recorded meanwhile, each exactly once through the fixed pipeline. Before the fix they would pay twice again.</source>
        <translation>恢复处理，回放期间记录的回调，每条都经修复后的流程只处理一次。修复前回放会再次重复发放。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Backlog</source>
        <translation>积压回调</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Inspect green</source>
        <translation>巡检通过</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The check of payops inspect: no live duplicate, no payment waiting to be applied. Run it from cron, so the next incident is found by a machine and not by finance.</source>
        <translation>payops inspect 的检查：没有未补偿的重复发放，没有待处理的支付。用 cron 定时运行，让下一次事故由机器发现，而不是等财务来问。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Export the incident report</source>
        <translation>导出事故报告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A PDF for finance of the incident&apos;s window: when the duplicates began, who flipped the switch, what was compensated and by whom, the totals in yuan, the reconciliation and the audit chain&apos;s head hash. payops report writes the same file from cron.</source>
        <translation>交给财务的事故时间窗口 PDF：重复发放何时开始，谁切换了开关，补偿了什么、由谁补偿，以元计的合计，对账结果，以及审计链的链头哈希。payops report 可从 cron 生成同样的文件。</translation>
    </message>
    <message>
        <location line="+33"/>
        <location line="+276"/>
        <source>Playbook</source>
        <translation>处置手册</translation>
    </message>
    <message>
        <location line="-264"/>
        <source>Not connected.</source>
        <translation>未连接。</translation>
    </message>
    <message>
        <location line="+53"/>
        <source>Run the incident…</source>
        <translation>重现事故…</translation>
    </message>
    <message>
        <location line="+11"/>
        <location line="+189"/>
        <source>Apply the keys…</source>
        <translation>添加幂等键…</translation>
    </message>
    <message>
        <location line="-186"/>
        <source>Restart safe…</source>
        <translation>以 safe 重启…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Incident report…</source>
        <translation>事故报告…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Check now</source>
        <translation>立即检查</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>The local instances: %1</source>
        <translation>本地实例：%1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>The storm: %1</source>
        <translation>回调风暴：%1</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Checking %1 …</source>
        <translation>正在检查 %1…</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>Could not check: %1</source>
        <translation>无法检查：%1</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>%1 of %2 steps done</source>
        <translation>已完成 %1 / %2 步</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The team&apos;s tables, through the mapping, behind %1 live payops gateway(s).</source>
        <translation>团队自己的表，通过映射读取，前面有 %1 个在线的 payops 网关。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The team&apos;s tables, through the mapping: the steps of payops&apos;s own callback handling are not available.</source>
        <translation>团队自己的表，通过映射读取：payops 自身回调处理的步骤不可用。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>On a sandbox: the incident can be simulated.</source>
        <translation>当前是沙箱：可以模拟事故。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Not a sandbox: a runbook, without step 1.</source>
        <translation>不是沙箱：作为处置手册使用，没有第 1 步。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Watch the mapping&apos;s side effects issued twice appear on the overview: the mapped duplicate watch reads only what is new in your tables.</source>
        <translation>在概览页观察映射中各副作用的重复发放：映射表的重复发放监测只读取你们表中新增的内容。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Group each side effect by (order, key), as the mapping names them: how many orders, how many extra copies, how much money is at risk.</source>
        <translation>按映射中命名的（订单, 键）对每个副作用分组：涉及多少订单、多少多余副本、多少风险金额。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Give each side effect&apos;s table a unique key on (order, key), as the mapping names them: your DBA adds it once the duplicates are compensated, since payops never changes your schema. Or deploy a handler that holds its lock across the commit.</source>
        <translation>为每个副作用的表加上（订单, 键）的唯一键（按映射中的命名）：由你们的 DBA 在重复发放补偿完后添加，因为 payops 从不修改你们的表结构。或者部署一个持锁直到提交之后的处理器。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Give each side effect its own key (uk_order_tpl, uk_order_type), refused while live duplicates remain, then restart the instances with the safe handler, which holds its lock across the commit.</source>
        <translation>为每种副作用建立各自的幂等键（uk_order_tpl、uk_order_type），存在未补偿的重复发放时会被拒绝；然后用 safe 处理器重启实例，它会持有锁直到提交之后。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Give each side effect its own key (uk_order_tpl, uk_order_type), refused while live duplicates remain, and deploy the safe handler: the lock held until after the commit, checked from the last hour&apos;s traces.</source>
        <translation>为每种副作用建立各自的幂等键（uk_order_tpl、uk_order_type），存在未补偿的重复发放时会被拒绝；并部署 safe 处理器：锁持有到提交之后，依据最近一小时的回调追踪判断。</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Applying the keys …</source>
        <translation>正在添加幂等键…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Evidence of order %1</source>
        <translation>订单 %1 的证据</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Start %1 payops-callbackd instances with the unsafe-demo handler on this sandbox, create %2 new PENDING orders and deliver each payment&apos;s callback %3 times, %4 ms apart?</source>
        <translation>在此沙箱上用 unsafe-demo 处理器启动 %1 个 payops-callbackd 实例，创建 %2 个新的 PENDING 订单，并将每笔支付的回调投递 %3 次、间隔 %4 ms？</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Run the incident</source>
        <translation>重现事故</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Restart the %1 local instance(s) with the safe handler? Callbacks in flight are finished first.</source>
        <translation>用 safe 处理器重启 %1 个本地实例？正在处理的回调会先处理完。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Restart safe</source>
        <translation>以 safe 重启</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Add the side-effect keys uk_order_tpl and uk_order_type to %1? The database refuses while live duplicates remain: compensate them first. One ALTER TABLE per table; it cannot be stopped half-way.</source>
        <translation>为 %1 添加副作用幂等键 uk_order_tpl 和 uk_order_type？存在未补偿的重复发放时数据库会拒绝：请先补偿。每张表执行一条 ALTER TABLE，中途无法停止。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Apply the keys</source>
        <translation>添加幂等键</translation>
    </message>
</context>
<context>
    <name>payops::Posture</name>
    <message>
        <location filename="../../app/domain/inspection/posture.cpp" line="+67"/>
        <source>this database has no payops schema (no %1); run payops migrate first</source>
        <translation>该数据库没有 payops 表结构（缺少 %1），请先运行 payops migrate</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>%1 has unique key %2 (%3), over live rows: compensated duplicates keep their history</source>
        <translation>%1 有唯一索引 %2（%3），只约束未处理的行：已补偿的重复记录保留历史</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+328"/>
        <source>%1 has unique key %2 (%3)</source>
        <translation>%1 有唯一索引 %2（%3）</translation>
    </message>
    <message>
        <location line="-321"/>
        <source>%1 has no unique key on (%2); the database is at level legacy: compensate the live duplicates, then add the keys (payops migrate --level current, or the playbook&apos;s fix step)</source>
        <translation>%1 在 (%2) 上没有唯一索引；数据库处于 legacy 级别：请先补偿未处理的重复记录，再添加幂等键（payops migrate --level current，或处置手册的修复步骤）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 has no unique key on (%2)</source>
        <translation>%1 在 (%2) 上没有唯一索引</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>in the last hour, %1</source>
        <translation>最近一小时：%1</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>State change by CAS with its affected rows checked</source>
        <translation>用 CAS 改状态并检查受影响行数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a second callback that waited on the first one&apos;s row lock updates 0 rows, nobody looks, and it issues the coupon and the points again</source>
        <translation>第二个回调等到第一个的行锁后更新了 0 行，没人检查，又发了一遍优惠券和积分</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>order_state is empty; run payops migrate</source>
        <translation>order_state 为空，请运行 payops migrate</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>%1 payment attempt(s) updated 0 rows and went on anyway (affected_rows_ignored, instance %2)</source>
        <translation>%1 次支付尝试更新了 0 行却继续执行（affected_rows_ignored，实例 %2）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 repeated payment attempt(s) were rejected by the CAS (e.g. PAID-&gt;PAID order_already_paid) and went no further</source>
        <translation>%1 次重复支付尝试被 CAS 拒绝（例如 PAID-&gt;PAID order_already_paid），没有继续执行</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 attempt(s) went on with 0 rows updated on instance %2, which no longer runs that code</source>
        <translation>实例 %2 上有 %1 次尝试在更新 0 行后继续执行，该实例已不再运行那段代码</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>no repeated payment attempt by running code, so nothing shows whether the CAS&apos;s affected rows are checked</source>
        <translation>运行中的代码没有重复支付尝试，因此无法判断 CAS 的受影响行数是否被检查</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Lock on pay_no held until after the commit</source>
        <translation>pay_no 上的锁持有到提交之后</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a callback 40 ms behind another takes the released lock, reads the order as still PENDING (the first has not committed) and runs every side effect again</source>
        <translation>晚 40 毫秒的回调拿到已释放的锁，读到订单仍是 PENDING（第一个还没提交），把所有副作用再执行一遍</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>instance %1, handler %2</source>
        <translation>实例 %1，处理器 %2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 released before the commit in %2 of %3 callback(s) but no longer runs</source>
        <translation>%1 在 %3 个回调中有 %2 个在提交前释放了锁，但已不再运行</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1: %2 of %3 callback(s) released the lock before the commit</source>
        <translation>%1：%3 个回调中有 %2 个在提交前释放了锁</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1: all %2 callback(s) released after the commit</source>
        <translation>%1：全部 %2 个回调都在提交后释放锁</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>no running instance traced a callback with a lock and a commit</source>
        <translation>没有运行中的实例记录过带锁和提交的回调</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Record-only switch, acknowledged by every live instance</source>
        <translation>只记录降级开关，所有在线实例都已确认</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>no way to stop processing without taking the endpoint down: the platform&apos;s retries keep paying out while you look for the cause, or an instance that never heard the flip keeps doing so</source>
        <translation>不停掉回调接口就无法停止处理：排查原因期间平台的重试会继续重复发放，或者没收到切换的实例会继续发放</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>callback_switch has no row; run payops migrate</source>
        <translation>callback_switch 没有数据行，请运行 payops migrate</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>%1 (applies version %2)</source>
        <translation>%1（应用版本 %2）</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>the switch is %1, version %2, but %3 of %4 live instance(s) have not applied it: %5</source>
        <translation>降级开关为 %1，版本 %2，但 %4 个在线实例中有 %3 个尚未应用：%5</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>the switch is %1, version %2; no instance is live to apply it</source>
        <translation>降级开关为 %1，版本 %2；没有在线实例来应用它</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the switch is %1, version %2; all %3 live instance(s) apply it</source>
        <translation>降级开关为 %1，版本 %2；全部 %3 个在线实例都已应用</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Audit log append-only and hash-chained, intact</source>
        <translation>审计日志只追加、哈希成链且完好</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a compensation or a switch flip edited or removed afterwards goes unnoticed, and finance cannot trust the record of who did what</source>
        <translation>事后被修改或删除的补偿、开关切换无人察觉，财务无法信任谁做了什么的记录</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>the audit log is broken: %1; run payops audit verify for the whole chain</source>
        <translation>审计日志已损坏：%1；请运行 payops audit verify 校验整条链</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>the audit log is empty and its head agrees</source>
        <translation>审计日志为空，链头一致</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>all %1 audit entries hash and link correctly up to the head</source>
        <translation>全部 %1 条审计记录的哈希和链接直到链头都正确</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the newest %1 of %2 audit entries hash and link correctly up to the head; payops audit verify checks the whole chain</source>
        <translation>%2 条审计记录中最新的 %1 条的哈希和链接直到链头都正确；payops audit verify 会校验整条链</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Duplicate inspection on a schedule</source>
        <translation>定时巡检重复记录</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>duplicates and refunds owed are found when finance asks, days later, instead of minutes after they happen</source>
        <translation>重复发放和应退款要等几天后财务来问才发现，而不是发生后几分钟内</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>this database keeps no inspection runs yet (run payops migrate), so it cannot tell whether one runs</source>
        <translation>该数据库还不保存巡检记录（请运行 payops migrate），因此无法判断巡检是否在运行</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>no inspection was ever stored; schedule one in the console&apos;s settings or run payops inspect from cron, at least every %1 hours</source>
        <translation>从未保存过巡检；请在控制台设置中安排定时巡检，或用 cron 运行 payops inspect，至少每 %1 小时一次</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>the newest inspection ran at %1 UTC (%2), within the last %3 hours</source>
        <translation>最近一次巡检在 %1 UTC（%2），在最近 %3 小时内</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>the newest inspection ran at %1 UTC (%2), more than %3 hours ago: the schedule has stopped</source>
        <translation>最近一次巡检在 %1 UTC（%2），已超过 %3 小时：定时巡检已停止</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Key of side effect %1 (order, %2)</source>
        <translation>副作用 %1 的键（订单, %2）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>a second live copy for one order whenever anything upstream is bypassed: a lock released early, an unchecked CAS, a message consumed twice</source>
        <translation>只要上游任何一环被绕过（锁提前释放、CAS 未检查、消息被消费两次），同一订单就会多出一份有效副本</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>%1 has no unique key on exactly (%2)</source>
        <translation>%1 没有恰好建在 (%2) 上的唯一键</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 has no unique key on exactly (%2); %3 has more columns, so it does not keep a group to one row</source>
        <translation>%1 没有恰好建在 (%2) 上的唯一键；%3 多了列，因此不能把一组限制为一行</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Order state writable by CAS (the order id a key)</source>
        <translation>订单状态可用 CAS 写入（订单 ID 是键）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the state change by order id may match several rows, so its affected rows no longer tell whether this callback won: two callbacks can both pay</source>
        <translation>按订单 ID 修改状态可能匹配多行，影响行数就无法说明本次回调是否抢到：两个回调都可能完成支付</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 has %2 on (%3): a CAS on %4 changes one row at most</source>
        <translation>%1 在 (%3) 上有%2：对 %4 的 CAS 最多改一行</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the primary key</source>
        <translation>主键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>unique key %1</source>
        <translation>唯一键 %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 has no index at all, or does not exist</source>
        <translation>%1 没有任何索引，或不存在</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 has no primary or unique key on (%2)</source>
        <translation>%1 在 (%2) 上没有主键或唯一键</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>On this Galera cluster (%1 nodes) the lock is local to a node: two deliveries reaching two nodes both take it. There the certified unique pay_no, the CAS and the side-effect keys keep a payment single.</source>
        <translation>在这个 Galera 集群（%1 个节点）上，该锁只在单个节点内有效：到达两个节点的两次投递会同时拿到它。在集群上，经过认证的唯一 pay_no、CAS 与副作用唯一键保证一笔支付只处理一次。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Certified across this Galera cluster&apos;s %1 nodes: of two transactions that write the same key on two nodes, the second to commit is aborted (1213).</source>
        <translation>在这个 Galera 集群的 %1 个节点间经过认证：两个节点上写同一个键的两个事务，后提交的那个会被中止（1213）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>On this Galera cluster (%1 nodes) the barrier&apos;s shared lock is not certified: a flip does not wait for a transaction on another node. An instance acknowledges the flip once its transactions that read the old mode have ended: the flip holds when every instance has acknowledged it.</source>
        <translation>在这个 Galera 集群（%1 个节点）上，屏障的共享锁不经过认证：切换不会等待其他节点上的事务。实例要等到它读取旧模式的事务全部结束后才确认切换：所有实例都确认后，切换才生效。</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Unique key on pay_no (each callback accepted once)</source>
        <translation>pay_no 唯一索引（每个回调只接受一次）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>a platform retry that races past the replay check is recorded and processed again as a new payment</source>
        <translation>绕过重放检查的平台重试被当作新支付再记录、再处理一次</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Coupon key (order, coupon template)</source>
        <translation>优惠券幂等键（订单，券模板）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a second coupon of one template for one order whenever anything upstream is bypassed: a lock released early, an unchecked CAS, a message consumed twice</source>
        <translation>只要上游任一环节失守（锁提前释放、CAS 未检查、消息被消费两次），同一订单同一券模板就会再发一张优惠券</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Points key (order, point type)</source>
        <translation>积分幂等键（订单，积分类型）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a second points row of one type for one order whenever anything upstream is bypassed, paid out to the user&apos;s balance</source>
        <translation>只要上游任一环节失守，同一订单同一积分类型就会再加一条积分，并计入用户余额</translation>
    </message>
</context>
<context>
    <name>payops::PostureModel</name>
    <message>
        <location filename="../../ui/models/posturemodel.cpp" line="+34"/>
        <source>Present</source>
        <translation>已具备</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Missing</source>
        <translation>缺失</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location line="+59"/>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Defence</source>
        <translation>防护措施</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>What was found</source>
        <translation>检查结果</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Without it, what gets through</source>
        <translation>缺失时会放过什么</translation>
    </message>
</context>
<context>
    <name>payops::PosturePage</name>
    <message>
        <location filename="../../ui/pages/posturepage.cpp" line="+22"/>
        <source>Reading the defences…</source>
        <translation>正在读取防护措施…</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Read from the schema, the last hour&apos;s callback traces and payment attempts, the heartbeats and the newest audit entries; never from history. Unknown means there was nothing to judge by, and does not count as missing for payops posture.</source>
        <translation>依据表结构、最近一小时的回调追踪和支付尝试、心跳以及最新的审计条目判断，不看历史数据。“未知”表示没有可供判断的依据，payops posture 不将其计为缺失。</translation>
    </message>
    <message>
        <location line="+46"/>
        <source>&lt;b&gt;%1 of %2 defences present.&lt;/b&gt;</source>
        <translation>&lt;b&gt;%2 项防护措施中已具备 %1 项。&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 missing: each lets duplicates through, as the last column says.</source>
        <translation>%1 项缺失：每项都会放过重复，见最后一列。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>None missing.</source>
        <translation>无缺失。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 unknown: nothing to judge them by yet.</source>
        <translation>%1 项未知：暂无可供判断的依据。</translation>
    </message>
</context>
<context>
    <name>payops::ReadSource</name>
    <message numerus="yes">
        <location filename="../../app/domain/inspection/readsource.cpp" line="+46"/>
        <location line="+13"/>
        <source>%n transaction(s) behind</source>
        <translation>
            <numerusform>落后 %n 个事务</numerusform>
        </translation>
    </message>
    <message>
        <location line="-11"/>
        <location line="+12"/>
        <source>no primary to compare with</source>
        <translation>没有可比较的主库</translation>
    </message>
    <message>
        <location line="-11"/>
        <source>%1 s behind</source>
        <translation>落后 %1 秒</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>seconds behind unknown: %1</source>
        <translation>落后秒数未知：%1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>reading from %1: %2</source>
        <translation>正在从 %1 读取：%2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 — stale (more than %2 s)</source>
        <translation>%1 — 已过时（超过 %2 秒）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>replica: %1</source>
        <translation>副本：%1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 — stale</source>
        <translation>%1 — 已过时</translation>
    </message>
</context>
<context>
    <name>payops::ReceivedCallbackView</name>
    <message>
        <location filename="../../ui/widgets/receivedcallbackview.cpp" line="+27"/>
        <source>No platform headers kept.</source>
        <translation>未保存平台请求头。</translation>
    </message>
    <message numerus="yes">
        <location line="+20"/>
        <source>Callback %1 as received (%2): the platform&apos;s headers, and the raw body (%n byte(s))%3:</source>
        <translation>
            <numerusform>回调 %1 的原文（%2）：平台的请求头，以及原始报文（%n 字节）%3：</numerusform>
        </translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Encrypted by WeChat Pay: its resource is AES-256-GCM ciphertext, unreadable without the merchant&apos;s API v3 key; the payment&apos;s fields were decrypted from it.</source>
        <translation>由微信支付加密：其 resource 是 AES-256-GCM 密文，没有商户的 API v3 密钥无法阅读；支付的各字段是从中解密得到的。</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>; not valid UTF-8, undecodable bytes shown as �</source>
        <translation>；不是有效的 UTF-8，无法解码的字节显示为 �</translation>
    </message>
</context>
<context>
    <name>payops::Reconciliation</name>
    <message>
        <location filename="../../app/domain/statement/reconciliation.cpp" line="+499"/>
        <source>there is no statement %1</source>
        <translation>不存在对账单 %1</translation>
    </message>
</context>
<context>
    <name>payops::ReconciliationPage</name>
    <message>
        <location filename="../../ui/pages/reconciliationpage.cpp" line="+35"/>
        <source>WeChat Pay trade bill</source>
        <translation>微信支付交易账单</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Alipay business detail</source>
        <translation>支付宝业务明细</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>generic CSV</source>
        <translation>通用 CSV</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>detect</source>
        <translation>自动识别</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>#%1 · %2 · %3 · %4 lines</source>
        <translation>#%1 · %2 · %3 · %4 行</translation>
    </message>
    <message>
        <location line="+58"/>
        <source>Import a statement…</source>
        <translation>导入对账单…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>A WeChat Pay trade bill, an Alipay business-detail CSV or the generic CSV. The same file twice is found by its SHA-256 and stored once.</source>
        <translation>微信支付交易账单、支付宝业务明细 CSV 或通用 CSV。同一文件按 SHA-256 识别，只存储一次。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Demo statements</source>
        <translation>演示对账单</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The sandbox&apos;s WeChat Pay bill and Alipay business detail of its demo payments, each with a few findings planted.</source>
        <translation>沙箱按其演示支付生成的微信支付账单和支付宝业务明细，每份都预置了几处差异。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Detect from the file</source>
        <translation>从文件识别</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Statement:</source>
        <translation>对账单：</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>none imported yet</source>
        <translation>尚未导入</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Reconcile again</source>
        <translation>重新对账</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Compares the stored statement with the payments as they are now, and stores the run.</source>
        <translation>将已存储的对账单与当前的支付记录比对，并保存本次对账结果。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Import a platform&apos;s statement to reconcile it by pay_no.</source>
        <translation>导入平台对账单，按 pay_no 对账。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Double-click a finding for its order&apos;s evidence; hover for what to do about it.</source>
        <translation>双击问题查看其订单的证据；鼠标悬停查看处理建议。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Draft the missing payment…</source>
        <translation>起草漏单补录…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Records the platform&apos;s payment as the callback it should have been, once a second account confirms it; the backlog drain then applies it.</source>
        <translation>经另一个账号确认后，将平台上的这笔支付记为本应收到的回调；之后由积压回调回放来处理。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Not on the team&apos;s own tables: a drafted payment is applied to payops&apos;s orders; the team pays its order itself.</source>
        <translation>团队自己的表上不可用：草拟的支付会作用于 payops 自己的订单；团队的订单由团队自行补单。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Findings</source>
        <translation>发现的问题</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>A confirmed payment waits in the backlog as a recorded callback: drain the backlog to apply it. The account that drafted cannot confirm.</source>
        <translation>已确认的支付作为已记录的回调进入积压：回放积压回调即可处理。起草的账号不能确认。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Confirm…</source>
        <translation>确认…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Discard…</source>
        <translation>丢弃…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Missing payments</source>
        <translation>漏单</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Unreadable lines</source>
        <translation>无法解析的行</translation>
    </message>
    <message>
        <location line="+101"/>
        <source>&lt;b&gt;Statement %1&lt;/b&gt;, %2%3, channel %4, %5 – %6 Beijing time (%7), %8 lines, imported by %9.</source>
        <translation>&lt;b&gt;对账单 %1&lt;/b&gt;，%2%3，渠道 %4，北京时间 %5 – %6（%7），%8 行，由 %9 导入。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> (detected)</source>
        <translation>（自动识别）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>any</source>
        <translation>任意</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>declared by the file</source>
        <translation>文件声明</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>its first and last payment</source>
        <translation>按首末笔支付</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Unreadable lines: %1.</source>
        <translation>无法解析的行：%1。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Not reconciled yet.</source>
        <translation>尚未对账。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 × %2</source>
        <translation>%2：%1 条</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Reconciled %1 UTC by %2: </source>
        <translation>%2 于 %1 UTC 完成对账：</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>everything matches.</source>
        <translation>全部一致。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Only the first %1 findings are listed; Export CSV… writes them all.</source>
        <translation>仅列出前 %1 个问题；“导出 CSV…”会写出全部问题。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>line %1: %2</source>
        <translation>第 %1 行：%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Findings (%1)</source>
        <translation>发现的问题（%1）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Missing payments (%1)</source>
        <translation>漏单（%1）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Unreadable lines (%1)</source>
        <translation>无法解析的行（%1）</translation>
    </message>
    <message>
        <location line="+47"/>
        <source>Import a platform statement</source>
        <translation>导入平台对账单</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Importing %1 …</source>
        <translation>正在导入 %1…</translation>
    </message>
    <message>
        <location line="-345"/>
        <source>Not imported:</source>
        <translation>未导入：</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 cannot open %2: %3</source>
        <translation>%1 无法打开 %2：%3</translation>
    </message>
    <message>
        <location line="+348"/>
        <source>Importing … %1 lines stored, %2 % of the file</source>
        <translation>正在导入… 已存储 %1 行，进度 %2 %</translation>
    </message>
    <message>
        <location line="-343"/>
        <source>The import was stopped; nothing was stored.</source>
        <translation>导入已停止，未存储任何内容。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>This file was %1: reconciled the stored statement again.</source>
        <translation>此文件之前已导入（%1），已对已存储的对账单重新对账。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Imported %1 lines as statement %2 (%3) and reconciled them: %4 findings.</source>
        <translation>已导入 %1 行，存为对账单 %2（%3）并完成对账：发现 %4 个问题。</translation>
    </message>
    <message>
        <location line="-9"/>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <location line="+328"/>
        <source>Statements (*.csv *.txt *.zip *.gz);;All files (*)</source>
        <translation>对账单 (*.csv *.txt *.zip *.gz);;所有文件 (*)</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>The import failed: %1</source>
        <translation>导入失败：%1</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Reconciling statement %1 …</source>
        <translation>正在核对对账单 %1…</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Reconciled statement %1 again.</source>
        <translation>已重新核对对账单 %1。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Not reconciled: %1</source>
        <translation>未能对账：%1</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Done.</source>
        <translation>完成。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Refused:</source>
        <translation>被拒绝：</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Drafting the payment of line %1 …</source>
        <translation>正在为第 %1 行起草漏单补录…</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Confirming draft %1 …</source>
        <translation>正在确认草稿 %1…</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Discarding draft %1 …</source>
        <translation>正在丢弃草稿 %1…</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Which order did it pay?</source>
        <translation>这笔支付对应哪个订单？</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The platform&apos;s line names no order of ours. Order id:</source>
        <translation>平台的这一行没有对应我方订单。订单 ID：</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Draft the missing payment</source>
        <translation>起草漏单补录</translation>
    </message>
    <message>
        <location line="+0"/>
        <location line="+12"/>
        <source>Why (kept in the audit log):</source>
        <translation>原因（记入审计日志）：</translation>
    </message>
    <message>
        <location line="-11"/>
        <source>漏单 on statement %1</source>
        <translation>对账单 %1 漏单</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Confirm the missing payment</source>
        <translation>确认漏单补录</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Discard the draft</source>
        <translation>丢弃草稿</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checked against the platform? Why (kept in the audit log):</source>
        <translation>已与平台核实？原因（记入审计日志）：</translation>
    </message>
</context>
<context>
    <name>payops::ReplicaPreview</name>
    <message>
        <location filename="../../ui/dialogs/replicapreview.cpp" line="+10"/>
        <source>Planned again on the primary: the same as the replica showed.</source>
        <translation>已在主库上重新规划：与从库显示的一致。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The replica is behind: it showed %1 order(s) and %2 row(s) to change, the primary has %3 order(s) and %4 row(s) now. The figures above are the primary&apos;s, and they are what runs.</source>
        <translation>从库落后于主库：它显示 %1 个订单、%2 行待更改，主库现在为 %3 个订单、%4 行。上面的数字来自主库，执行的也是主库的计划。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Not planned on the replica (%1): the figures above are the primary&apos;s alone, and they are what runs.</source>
        <translation>未能在从库上规划（%1）：上面的数字仅来自主库，执行的也是这些。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>The preview failed on the primary, where the compensation runs: %1</source>
        <translation>在执行补偿的主库上预览失败：%1</translation>
    </message>
    <message>
        <location filename="../../ui/dialogs/replicapreview.h" line="+75"/>
        <source>Read from the replica; planning again on the primary …</source>
        <translation>已从从库读取；正在主库上重新规划…</translation>
    </message>
</context>
<context>
    <name>payops::ReplicaSide</name>
    <message>
        <location filename="../../app/domain/inspection/readsource.cpp" line="+50"/>
        <source>the server is not a replica</source>
        <translation>该服务器不是从库</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>replication is stopped</source>
        <translation>复制已停止</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>the account may not read SHOW SLAVE STATUS (it needs the grant REPLICA MONITOR)</source>
        <translation>该账号无权读取 SHOW SLAVE STATUS（需要 REPLICA MONITOR 权限）</translation>
    </message>
</context>
<context>
    <name>payops::ReportDialog</name>
    <message>
        <location filename="../../ui/dialogs/reportdialog.cpp" line="+43"/>
        <source>Incident report</source>
        <translation>事故报告</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>A PDF of one window: when the duplicates began, the switch&apos;s flips and who made them, what was compensated and by whom, the totals in yuan, the reconciliation, charts and the audit chain&apos;s head. The same file as &lt;tt&gt;payops report&lt;/tt&gt;.</source>
        <translation>一个时间窗口的 PDF：重复何时开始，开关的每次切换及操作人，补偿了什么、由谁补偿，以元计的合计，对账结果，图表，以及审计链的链头哈希。与 &lt;tt&gt;payops report&lt;/tt&gt; 生成的文件相同。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Read from %1, as far as it has caught up with its primary (the status bar says how far behind it is).</source>
        <translation>从 %1 读取，内容以其跟上主库的程度为准（状态栏显示其落后多少）。</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>From (UTC, included)</source>
        <translation>开始（UTC，含）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>To (UTC, excluded)</source>
        <translation>结束（UTC，不含）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Choose…</source>
        <translation>选择…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Write report</source>
        <translation>生成报告</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Write the incident report</source>
        <translation>保存事故报告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PDF files (*.pdf)</source>
        <translation>PDF 文件 (*.pdf)</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>Not written:</source>
        <translation>未生成：</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 the window is empty: “from” must be before “to”.</source>
        <translation>%1时间窗口为空：“开始”必须早于“结束”。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 choose a file to write.</source>
        <translation>%1请选择要写入的文件。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Reading the incident from the database …</source>
        <translation>正在从数据库读取事故数据 …</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Written to &lt;a href=&quot;%1&quot;&gt;%2&lt;/a&gt;.</source>
        <translation>已写入 &lt;a href=&quot;%1&quot;&gt;%2&lt;/a&gt;。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancelled: no file was written.</source>
        <translation>已取消：未写入任何文件。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Printing the PDF …</source>
        <translation>正在生成 PDF …</translation>
    </message>
</context>
<context>
    <name>payops::RsaPublicKey</name>
    <message>
        <location filename="../../app/domain/callback/platformkey.cpp" line="+40"/>
        <source>it holds no public key (-----BEGIN PUBLIC KEY----- or a certificate)</source>
        <translation>其中没有公钥（-----BEGIN PUBLIC KEY----- 或证书）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>its public key is not an RSA key</source>
        <translation>其中的公钥不是 RSA 密钥</translation>
    </message>
</context>
<context>
    <name>payops::Sandbox</name>
    <message>
        <location filename="../../app/lab/sandbox.cpp" line="+28"/>
        <source>the demo seed is missing from this build</source>
        <translation>此版本缺少演示数据</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>seeding demo data</source>
        <translation>正在写入演示数据</translation>
    </message>
</context>
<context>
    <name>payops::SandboxKeysText</name>
    <message>
        <location filename="../../app/lab/sandboxkeys.cpp" line="+30"/>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <location line="+74"/>
        <source>cannot make %1 private to its owner (mode 0700)</source>
        <translation>无法将 %1 设为仅属主可用（权限 0700）</translation>
    </message>
</context>
<context>
    <name>payops::ServiceCommandLine</name>
    <message>
        <location filename="../../app/service/httplimits.cpp" line="+11"/>
        <source>HTTP event loops.</source>
        <translation>HTTP 事件循环数。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Open connections, all clients together.</source>
        <translation>所有客户端合计的打开连接数。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Open connections from one address (default: a sixteenth of --max-connections; 0: no limit, as behind a proxy, where all share one).</source>
        <translation>来自同一地址的连接数（默认：--max-connections 的十六分之一；0 表示不限，用于代理之后，那里所有客户端共用一个地址）。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Bytes of request line and headers.</source>
        <translation>请求行和请求头的字节数。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Bytes of body, as its Content-Length declares it (413 past it).</source>
        <translation>请求体字节数，以请求声明的长度为准（超过则 413）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Seconds to receive one request&apos;s headers and body.</source>
        <translation>接收一个请求的请求头和请求体的秒数。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Seconds a connection may go without a callback; other requests do not count.</source>
        <translation>连接在没有回调时可保持的秒数；其他请求不计入。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Seconds a connection may live; then it is closed between requests.</source>
        <translation>连接可存活的秒数；到期后在两个请求之间关闭。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Requests on one connection before it is closed.</source>
        <translation>一个连接关闭前可处理的请求数。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Callbacks waiting for a database worker (503 past it).</source>
        <translation>等待数据库工作线程的回调数（超过则 503）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Milliseconds a callback may wait for a worker (503 past it).</source>
        <translation>回调等待工作线程的毫秒数（超过则 503）。</translation>
    </message>
    <message>
        <location filename="../../app/service/serviceoptions.cpp" line="+18"/>
        <source>The payment-callback endpoint payops operates.</source>
        <translation>payops 运维的支付回调接口。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Database DSN (default: PAYOPS_DB).</source>
        <translation>数据库 DSN（默认：PAYOPS_DB）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>HOST:PORT to listen on (port 0: any free port).</source>
        <translation>监听的 HOST:PORT（端口 0：任一空闲端口）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>File holding the HMAC signing secret.</source>
        <translation>存放 HMAC 签名密钥的文件。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>safe, or unsafe-demo (the incident&apos;s bug; sandbox only).</source>
        <translation>safe，或 unsafe-demo（事故中的缺陷；仅限沙箱）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Instance name (default: HOSTNAME:PORT).</source>
        <translation>实例名（默认：HOSTNAME:PORT）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Database workers, each with its own connection.</source>
        <translation>数据库工作线程数，每个有自己的连接。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Start even if a live instance already has this --instance name.</source>
        <translation>即使已有在线实例使用此 --instance 名称也启动。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Seconds to wait for a pay_no&apos;s lock before answering 503.</source>
        <translation>等待 pay_no 锁的秒数，超时回答 503。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>RECORD_ONLY: at most this many callbacks share one commit.</source>
        <translation>RECORD_ONLY：一次提交最多记录这么多条回调。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>RECORD_ONLY: milliseconds a batch waits for more callbacks before it commits.</source>
        <translation>RECORD_ONLY：一批在提交前等待更多回调的毫秒数。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>unsafe-demo only: time between lock release and commit (widens the window).</source>
        <translation>仅 unsafe-demo：释放锁与提交之间的间隔（扩大时间窗口）。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Gateway mode: forward WeChat Pay notifications to this URL instead of --upstream.</source>
        <translation>网关模式：将微信支付通知转发到此 URL，而不是 --upstream。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Gateway mode: forward Alipay notifications to this URL instead of --upstream.</source>
        <translation>网关模式：将支付宝通知转发到此 URL，而不是 --upstream。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Seconds the platform waits for the upstream&apos;s answer before it is answered 504; the forward goes on.</source>
        <translation>平台等待上游应答的秒数，超时则回答 504；转发继续进行。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Seconds a forward may take in all; then its connection is closed and the payment may be forwarded again (default: twice --upstream-timeout, at least 30).</source>
        <translation>一次转发总共可用的秒数；到期后关闭其连接，该笔支付可被再次转发（默认：--upstream-timeout 的两倍，至少 30）。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Gateway mode, RECORD_ONLY: record these formats&apos; deliveries and answer 503, so that the platform&apos;s retry after the hold is forwarded.</source>
        <translation>网关模式，RECORD_ONLY 期间：记录这些格式的投递并回答 503，使平台在暂停结束后的重试被转发。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Forwards in flight at most, each on a connection of its own.</source>
        <translation>同时进行的转发数上限，每个转发使用自己的连接。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>trace, debug, info, warn, error or off.</source>
        <translation>trace、debug、info、warn、error 或 off。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>WeChat Pay merchant id: serves /callbacks/wechatpay with the three options below.</source>
        <translation>微信支付商户号：与下面三个选项一起启用 /callbacks/wechatpay。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>File holding the 32-byte WeChat Pay APIv3 key (mode 0600).</source>
        <translation>存放 32 字节微信支付 APIv3 密钥的文件（权限 0600）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>A WeChat Pay platform public key by its serial; repeat while keys rotate.</source>
        <translation>按序列号指定的微信支付平台公钥；密钥轮换期间可重复指定。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Alipay app id: serves /callbacks/alipay with --alipay-public-key.</source>
        <translation>支付宝 AppID：与 --alipay-public-key 一起启用 /callbacks/alipay。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>PEM file holding Alipay&apos;s public key (mode 0600).</source>
        <translation>存放支付宝公钥的 PEM 文件（权限 0600）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Another Alipay app of the merchant, with Alipay&apos;s public key for it; repeat for each.</source>
        <translation>商户的另一个支付宝应用，及其对应的支付宝公钥；每个应用各给一次。</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>--%1 needs --upstream</source>
        <translation>--%1 需要与 --upstream 一起使用</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>--upstream-bound must be more than --upstream-timeout (%1) and at most 600 seconds</source>
        <translation>--upstream-bound 必须大于 --upstream-timeout（%1），且不超过 600 秒</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>--upstream-connections must be 1-4096</source>
        <translation>--upstream-connections 必须在 1-4096 之间</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>--hold-by-retries takes wechatpay, alipay or pay, not &apos;%1&apos;</source>
        <translation>--hold-by-retries 只接受 wechatpay、alipay 或 pay，而不是“%1”</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>the key file</source>
        <translation>公钥文件</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 is not an RSA public key: %2</source>
        <translation>%1 不是 RSA 公钥：%2</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>WeChat Pay needs all of --wechatpay-mchid, --wechatpay-appid, --wechatpay-apiv3-key-file and --wechatpay-platform-key</source>
        <translation>微信支付需要同时指定 --wechatpay-mchid、--wechatpay-appid、--wechatpay-apiv3-key-file 和 --wechatpay-platform-key</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the APIv3 key file</source>
        <translation>APIv3 密钥文件</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>the APIv3 key in %1 is %2 bytes; it must be 32</source>
        <translation>%1 中的 APIv3 密钥为 %2 字节，必须是 32 字节</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>--wechatpay-platform-key must be SERIAL=PEMFILE, not &apos;%1&apos;</source>
        <translation>--wechatpay-platform-key 必须是 SERIAL=PEMFILE，而不是“%1”</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>--wechatpay-platform-key gives serial %1 twice</source>
        <translation>--wechatpay-platform-key 两次指定了序列号 %1</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Alipay needs both --alipay-app-id and --alipay-public-key</source>
        <translation>支付宝需要同时指定 --alipay-app-id 和 --alipay-public-key</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>--alipay-app must be ID=PEMFILE, not &apos;%1&apos;</source>
        <translation>--alipay-app 须为 ID=PEMFILE，而不是 ‘%1’</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Alipay app %1 is given twice</source>
        <translation>支付宝应用 %1 给了两次</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>--listen must be HOST:PORT, not &apos;%1&apos;</source>
        <translation>--listen 必须是 HOST:PORT，而不是“%1”</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>the secret in %1 is shorter than %2 bytes</source>
        <translation>%1 中的密钥短于 %2 字节</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>--handler must be safe or unsafe-demo</source>
        <translation>--handler 必须是 safe 或 unsafe-demo</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>--instance is longer than %1 characters</source>
        <translation>--instance 超过 %1 个字符</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>--threads must be 1-256</source>
        <translation>--threads 必须是 1-256</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>--lock-timeout must be 0-600 seconds</source>
        <translation>--lock-timeout 必须是 0-600 秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>--record-batch-rows must be 1-1000</source>
        <translation>--record-batch-rows 必须是 1-1000</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>--record-batch-ms must be 0-1000</source>
        <translation>--record-batch-ms 必须是 0-1000</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>--commit-delay-ms must be 0-60000</source>
        <translation>--commit-delay-ms 必须是 0-60000</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>--%1 must be %2-%3</source>
        <translation>--%1 必须是 %2-%3</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>--upstream-wechatpay needs the WeChat Pay options (--wechatpay-mchid and the three after it)</source>
        <translation>--upstream-wechatpay 需要微信支付的各项选项（--wechatpay-mchid 及其后的三个选项）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>--upstream-alipay needs --alipay-app-id and --alipay-public-key, or --alipay-app</source>
        <translation>--upstream-alipay 需要 --alipay-app-id 和 --alipay-public-key，或 --alipay-app</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>WeChat Pay has no upstream: give --upstream or --upstream-wechatpay</source>
        <translation>微信支付没有上游：请指定 --upstream 或 --upstream-wechatpay</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Alipay has no upstream: give --upstream or --upstream-alipay</source>
        <translation>支付宝没有上游：请指定 --upstream 或 --upstream-alipay</translation>
    </message>
    <message>
        <location line="-311"/>
        <source>Gateway mode: pay nothing, forward each callback exactly once to this URL (http or https), the team&apos;s own handler.</source>
        <translation>网关模式：自身不入账，把每条回调恰好一次转发到此 URL（HTTP 或 HTTPS），即团队自己的处理程序。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Verify the upstream&apos;s https certificate against this file instead of the system&apos;s CA store.</source>
        <translation>用此文件而不是系统的 CA 证书库校验上游的 HTTPS 证书。</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>WeChat Pay app id the payments are for; once for each app of the merchant.</source>
        <translation>付款所属的微信支付 AppID；商户的每个应用各给一次。</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>--handler and --upstream exclude each other: a gateway pays nothing itself, the upstream does</source>
        <translation>--handler 与 --upstream 不能同时使用：网关自身不入账，由上游入账</translation>
    </message>
</context>
<context>
    <name>payops::SettingsDialog</name>
    <message>
        <location filename="../../ui/dialogs/settingsdialog.cpp" line="+34"/>
        <source>System default</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A new language applies at the next start of the console.</source>
        <translation>新的语言在控制台下次启动时生效。</translation>
    </message>
    <message>
        <location line="-23"/>
        <source>Settings — payops console</source>
        <translation>设置 — payops 控制台</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Default: %1</source>
        <translation>默认：%1</translation>
    </message>
    <message>
        <location filename="../../app/console/consolesettings.cpp" line="+17"/>
        <source>Refresh the overview, instances and backlog every</source>
        <translation>总览、实例和积压回调的刷新间隔</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cash value of points</source>
        <translation>积分折算</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> points = ¥1</source>
        <translation> 积分 = ¥1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Run the inspection every (0 = off)</source>
        <translation>巡检间隔（0 = 关闭）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Call a replica&apos;s figures stale past</source>
        <translation>从库落后超过此值即视为数字过时</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> s behind</source>
        <translation> 秒</translation>
    </message>
</context>
<context>
    <name>payops::SideEffectKeys</name>
    <message>
        <location filename="../../app/domain/callback/sideeffectkeys.cpp" line="+38"/>
        <source>database &apos;%1&apos; was never migrated by payops; run payops migrate first</source>
        <translation>数据库“%1”从未由 payops 迁移过，请先运行 payops migrate</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the side-effect keys are already in place (database &apos;%1&apos; is at level current)</source>
        <translation>副作用幂等键已存在（数据库“%1”处于 current 级别）</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>added uk_order_tpl on user_coupon and uk_order_type on point_log; database &apos;%1&apos; is at level current</source>
        <translation>已在 user_coupon 上添加 uk_order_tpl，在 point_log 上添加 uk_order_type；数据库“%1”处于 current 级别</translation>
    </message>
</context>
<context>
    <name>payops::Signature</name>
    <message>
        <location filename="../../app/domain/callback/signature.cpp" line="+87"/>
        <source>--secret-file is required</source>
        <translation>必须指定 --secret-file</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the secret file</source>
        <translation>签名密钥文件</translation>
    </message>
    <message>
        <location line="+11"/>
        <location line="+8"/>
        <source>cannot read %1 %2: %3</source>
        <translation>无法读取%1 %2：%3</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 %2 is open to other users (mode %3): make it readable by its owner only (chmod 600 %2)</source>
        <translation>%1 %2 对其他用户开放（权限 %3）：请设为仅属主可读（chmod 600 %2）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 %2 is larger than 64 KiB: is it the right file?</source>
        <translation>%1 %2 大于 64 KiB：是不是选错了文件？</translation>
    </message>
</context>
<context>
    <name>payops::SimulationPage</name>
    <message>
        <location filename="../../ui/pages/simulationpage.cpp" line="+63"/>
        <source>&lt;b&gt;Simulate the incident on the sandbox.&lt;/b&gt; Start callback endpoints with the incident&apos;s handler (unsafe-demo: its lock is released before its commit), fire a storm of duplicate callbacks at them and watch the overview and the duplicates light up; then restart them with the safe handler and fire again.</source>
        <translation>&lt;b&gt;在沙箱上模拟事故。&lt;/b&gt;用事故时的处理器（unsafe-demo：在提交前释放锁）启动回调接口，向它们发起重复回调风暴，看总览和重复发放数据亮起；然后用 safe 处理器重启，再发一次。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Checking whether this database is a sandbox …</source>
        <translation>正在检查此数据库是否为沙箱…</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Instances and storm</source>
        <translation>实例与回调风暴</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Logs</source>
        <translation>日志</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Local callback endpoints</source>
        <translation>本地回调接口</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>How many payops-callbackd processes to start, each on a free port of 127.0.0.1</source>
        <translation>要启动的 payops-callbackd 进程数，每个占用 127.0.0.1 上的一个空闲端口</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Start unsafe-demo</source>
        <translation>启动 unsafe-demo</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The incident&apos;s handler: it pays out twice when two copies of a callback meet</source>
        <translation>事故时的处理器：同一回调的两份副本相遇时会重复发放</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Start safe</source>
        <translation>启动 safe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop all</source>
        <translation>全部停止</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Restart with the safe handler</source>
        <translation>用 safe 处理器重启</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Instances:</source>
        <translation>实例数：</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Handler</source>
        <translation>处理器</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Log file</source>
        <translation>日志文件</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Storm: the platform&apos;s deliveries</source>
        <translation>回调风暴：平台的投递</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Deliveries of each order&apos;s success callback; more than one is a duplicate</source>
        <translation>每个订单支付成功回调的投递次数；多于一次即为重复</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> ms</source>
        <translation> ms</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Time between the copies of one order (the gap pattern); the incident&apos;s was 40 ms</source>
        <translation>同一订单各份回调之间的间隔（gap 模式）；事故中为 40 ms</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>concurrent: copies at once · gap: copies the gap apart · replay: a second wave seconds later · mixed: some of each</source>
        <translation>concurrent：同时发出 · gap：按间隔发出 · replay：数秒后再发一轮 · mixed：以上混合</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Create fresh PENDING orders first</source>
        <translation>先创建新的 PENDING 订单</translation>
    </message>
    <message>
        <location line="+8"/>
        <source> orders/s</source>
        <translation> 单/秒</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>as fast as possible</source>
        <translation>尽可能快</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Retry any answer that is not 2xx, with back-off</source>
        <translation>非 2xx 响应按退避策略重试</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Orders</source>
        <translation>订单数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copies</source>
        <translation>份数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gap</source>
        <translation>间隔</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pattern</source>
        <translation>模式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Rate</source>
        <translation>速率</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Start storm</source>
        <translation>发起风暴</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>No storm yet.</source>
        <translation>尚未发起风暴。</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>Storm stopped.</source>
        <translation>风暴已停止。</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Storm finished.</source>
        <translation>风暴已结束。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The storm failed: %1</source>
        <translation>风暴失败：%1</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>This database is a sandbox: the unsafe handler and the storm may run here.</source>
        <translation>此数据库是沙箱：可以在此运行 unsafe 处理器和回调风暴。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Simulation is sandbox-only: %1 is not marked as a sandbox, so nothing here may run on it. Start one with payops sandbox start.</source>
        <translation>模拟仅限沙箱：%1 未标记为沙箱，此页的操作都不能在其上运行。可用 payops sandbox start 启动一个沙箱。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Cannot tell whether this database is a sandbox: %1</source>
        <translation>无法判断此数据库是否为沙箱：%1</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>starting</source>
        <translation>启动中</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>stopping</source>
        <translation>停止中</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Storm of %1 orders × %2 copies at %3 instance(s) …</source>
        <translation>风暴：%1 个订单 × %2 份，发往 %3 个实例…</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>sent %1 of %2 · &lt;b&gt;2xx %3&lt;/b&gt; · 4xx %4 · %5 · no answer %6 · retries %7</source>
        <translation>已发送 %1 / %2 · &lt;b&gt;2xx %3&lt;/b&gt; · 4xx %4 · %5 · 无响应 %6 · 重试 %7</translation>
    </message>
    <message>
        <location line="+4"/>
        <location line="+1"/>
        <source>5xx %1</source>
        <translation>5xx %1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> · %1 fresh orders</source>
        <translation> · 新建订单 %1 个</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> · running</source>
        <translation> · 运行中</translation>
    </message>
</context>
<context>
    <name>payops::StateMachinePage</name>
    <message>
        <location filename="../../ui/pages/statemachinepage.cpp" line="+30"/>
        <source>&lt;b&gt;Order state machine&lt;/b&gt; — states with the orders that entered them in the window; edges with their transitions in the window; %1</source>
        <translation>&lt;b&gt;订单状态机&lt;/b&gt; — 状态上为时间窗口内进入该状态的订单数，边上为时间窗口内的流转次数；%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>rejected attempts in red</source>
        <translation>被拒绝的尝试以红色显示</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;Order state machine&lt;/b&gt; — payops&apos;s states; each counts the orders of the team&apos;s own tables created in the window that are in it now</source>
        <translation>&lt;b&gt;订单状态机&lt;/b&gt; — payops 的状态；每个状态统计团队自己表中在时间窗口内创建、当前处于该状态的订单</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>States count the orders that entered them in this window (PENDING: the orders created in it); edges count the transition attempts made in it. Counted by the minute.</source>
        <translation>状态统计本时间窗口内进入该状态的订单（PENDING：窗口内创建的订单）；边统计窗口内的流转尝试次数。按分钟统计。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>States count the orders created in this window, by the state they are in now.</source>
        <translation>各状态统计在此时间窗口内创建的订单，按其当前所处状态计数。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The mapping names no updated_at: each refresh counts the whole window again.</source>
        <translation>映射未给出 updated_at：每次刷新都会重新统计整个时间窗口。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The window is read once; each refresh reads the orders changed since (updated_at).</source>
        <translation>时间窗口只读取一次；之后每次刷新只读取此后有变化的订单（updated_at）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Counted over</source>
        <translation>统计范围</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Click a state or an edge to list its orders; double-click an order for its evidence.</source>
        <translation>点击状态或边列出相关订单；双击订单查看证据。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>The team&apos;s own tables keep no log of transitions: how many orders took each edge, and the attempts payops would have rejected, cannot be known here. Look up an order on the Order evidence page.</source>
        <translation>团队自己的表不记录状态流转日志：每条边经过了多少订单、以及 payops 本会拒绝的尝试，在这里无从得知。请在“订单证据”页按订单号查询。</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Counting</source>
        <translation>正在统计</translation>
    </message>
    <message>
        <location line="+64"/>
        <source>%1 — double-click an order for its evidence</source>
        <translation>%1 — 双击订单查看证据</translation>
    </message>
</context>
<context>
    <name>payops::StateMachineScene</name>
    <message>
        <location filename="../../ui/widgets/statemachinescene.cpp" line="+144"/>
        <source>%1: %2 orders created in the window hold this value, which no state of the mapping names.</source>
        <translation>%1：窗口内创建的 %2 个订单取此值，映射中没有任何状态对应它。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1: %2 orders created in the window are in this state now.</source>
        <translation>%1：窗口内创建的 %2 个订单当前处于此状态。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1: %2 orders entered it in the window. Click to list them.</source>
        <translation>%1：时间窗口内有 %2 个订单进入此状态。点击列出。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>value %1, unnamed</source>
        <translation>值 %1，未命名</translation>
    </message>
    <message>
        <location line="+65"/>
        <source>✗ %1 rejected
%2</source>
        <translation>✗ 拒绝 %1 次
%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 — not in order_transition!</source>
        <translation>%1 — 不在 order_transition 中！</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1
%2 in window</source>
        <translation>%1
窗口内 %2 次</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>%1 → %2: %3 rejected attempts. Click to list the orders.</source>
        <translation>%1 → %2：%3 次尝试被拒。点击列出订单。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 → %2: %3 transitions. Click to list the orders.</source>
        <translation>%1 → %2：%3 次流转。点击列出订单。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 → %2: how many orders took this edge cannot be known: the team&apos;s tables keep no log of transitions.</source>
        <translation>%1 → %2：经过这条边的订单数无从得知：团队自己的表不记录状态流转日志。</translation>
    </message>
</context>
<context>
    <name>payops::StatementText</name>
    <message>
        <location filename="../../app/domain/statement/alipaystatement.cpp" line="+81"/>
        <location filename="../../app/domain/statement/statementreader.cpp" line="+20"/>
        <source>an Alipay business detail</source>
        <translation>支付宝业务明细</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>its table</source>
        <translation>明细表</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>its end marker (#---业务明细列表结束---)</source>
        <translation>结束标记（#---业务明细列表结束---）</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>has no 业务类型 (交易 or 退款)</source>
        <translation>缺少业务类型（交易或退款）</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>has a %1 that is not a time such as 2026-12-01 10:00:00: %2</source>
        <translation>%1 不是 2026-12-01 10:00:00 这样的时间：%2</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>has an 订单金额（元） that is not yuan with at most two decimals: %1</source>
        <translation>订单金额（元）不是最多两位小数的元金额：%1</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>says the file has %1 lines of %2, it lists %3: lines are missing or were added</source>
        <translation>声明文件有 %1 行%2，实际列出 %3 行：有行缺失或被添加</translation>
    </message>
    <message>
        <location filename="../../app/domain/statement/genericstatement.cpp" line="+38"/>
        <location filename="../../app/domain/statement/statementreader.cpp" line="+5"/>
        <source>a generic statement</source>
        <translation>通用对账单</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>it needs pay_no, order_id, amount_fen or amount, status, paid_at</source>
        <translation>需要 pay_no、order_id、amount_fen 或 amount、status、paid_at</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>not a generic statement: its header row must name exactly one of amount_fen (whole fen) and amount (yuan)</source>
        <translation>不是通用对账单：表头必须恰好包含 amount_fen（整数分）和 amount（元）中的一个</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>has an order_id that is not a whole number: %1</source>
        <translation>order_id 不是整数：%1</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>has an amount_fen that is not a whole number of fen: %1</source>
        <translation>amount_fen 不是整数分：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>has an amount that is not yuan with at most two decimals (12.30): %1</source>
        <translation>amount 不是最多两位小数的元金额（如 12.30）：%1</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>has no status</source>
        <translation>缺少 status</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>has a paid_at that is not an RFC 3339 time with its offset (2026-12-01T10:00:00+08:00 or 2026-12-01T02:00:00Z): %1</source>
        <translation>paid_at 不是带时区偏移的 RFC 3339 时间（2026-12-01T10:00:00+08:00 或 2026-12-01T02:00:00Z）：%1</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>is of channel &quot;%1&quot; where the file&apos;s first line is of &quot;%2&quot;: a statement covers one channel</source>
        <translation>渠道是“%1”，而文件第一行是“%2”：一份对账单只能有一个渠道</translation>
    </message>
    <message>
        <location filename="../../app/domain/statement/statementimport.cpp" line="+35"/>
        <source>the line has no transaction number (pay_no)</source>
        <translation>该行缺少交易号（pay_no）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the transaction number is longer than %1 bytes</source>
        <translation>交易号超过 %1 字节</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the status is longer than %1 characters</source>
        <translation>状态超过 %1 个字符</translation>
    </message>
    <message>
        <location line="+131"/>
        <source>the server stopped taking LOAD DATA LOCAL during the import</source>
        <translation>导入过程中服务器不再接受 LOAD DATA LOCAL</translation>
    </message>
    <message>
        <location line="+106"/>
        <source>already imported as statement %1 on %2 UTC by %3</source>
        <translation>已由 %3 于 %2 UTC 导入为对账单 %1</translation>
    </message>
    <message>
        <location line="+11"/>
        <location filename="../../app/domain/statement/statementsource.cpp" line="+41"/>
        <source>the file could not be read: %1</source>
        <translation>无法读取文件：%1</translation>
    </message>
    <message>
        <location line="+67"/>
        <source>the file could not be read twice (is it a pipe?); save it to a file first</source>
        <translation>文件无法读取两遍（是管道吗？），请先保存为文件</translation>
    </message>
    <message>
        <location filename="../../app/domain/statement/statementreader.cpp" line="-7"/>
        <location filename="../../app/domain/statement/wechatstatement.cpp" line="+45"/>
        <source>a WeChat bill</source>
        <translation>微信账单</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>its header row (交易时间,公众账号ID,...)</source>
        <translation>表头行（交易时间,公众账号ID,...）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>a header row naming pay_no</source>
        <translation>包含 pay_no 的表头行</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>the file is a ZIP archive (or an Excel workbook), not a CSV statement: unzip it, or download the statement as CSV</source>
        <translation>该文件是 ZIP 压缩包（或 Excel 工作簿），不是 CSV 对账单：请解压，或下载 CSV 格式的对账单</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>the file is gzip-compressed: decompress it (gunzip) first</source>
        <translation>该文件经过 gzip 压缩：请先解压（gunzip）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the file is a PDF, not a CSV statement</source>
        <translation>该文件是 PDF，不是 CSV 对账单</translation>
    </message>
    <message>
        <location line="+55"/>
        <source>the file is empty: it holds no statement</source>
        <translation>文件为空：没有对账单内容</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>the file is not UTF-8 text, and not an Alipay business detail (GBK): it is binary or in an encoding payops does not read</source>
        <translation>该文件不是 UTF-8 文本，也不是支付宝业务明细（GBK）：它是二进制文件，或是 payops 不支持的编码</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>not a statement payops knows: the first line is &quot;%1&quot;; expected a WeChat Pay trade bill, an Alipay business detail, or a CSV whose header names pay_no, order_id, amount_fen or amount, status and paid_at</source>
        <translation>不是 payops 认识的对账单：第一行是“%1”；应为微信支付交易账单、支付宝业务明细，或表头包含 pay_no、order_id、amount_fen 或 amount、status 和 paid_at 的 CSV</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>not %1: the file is not UTF-8 text (saved again in another encoding?)</source>
        <translation>不是%1：文件不是 UTF-8 文本（被另存为其他编码了？）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>not %1: its first line should be %2, it is &quot;%3&quot;</source>
        <translation>不是%1：第一行应为%2，实际是“%3”</translation>
    </message>
    <message>
        <location filename="../../app/domain/statement/statementsource.cpp" line="+2"/>
        <source>the file could not be read after line %1: %2</source>
        <translation>文件在第 %1 行之后无法读取：%2</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>line %1 is longer than %2 KiB: this is not a statement (a binary file?)</source>
        <translation>第 %1 行超过 %2 KiB：这不是对账单（二进制文件？）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>line %1 holds binary data (NUL bytes): this is not a statement, or it was damaged</source>
        <translation>第 %1 行含二进制数据（NUL 字节）：这不是对账单，或文件已损坏</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>line %1 is not %2 text: the file is damaged, binary or was saved in another encoding</source>
        <translation>第 %1 行不是 %2 文本：文件已损坏、是二进制文件，或被另存为其他编码</translation>
    </message>
    <message>
        <location filename="../../app/domain/statement/statementtable.cpp" line="+75"/>
        <source>line %1 opens a quoted field (&quot;) that is never closed: the file is damaged or not CSV</source>
        <translation>第 %1 行的引号字段（&quot;）没有闭合：文件已损坏或不是 CSV</translation>
    </message>
    <message>
        <location line="+42"/>
        <source>has %1 fields where the header row has %2 (a comma inside a value that is not quoted?)</source>
        <translation>有 %1 个字段，而表头有 %2 个（某个值里有未加引号的逗号？）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>has no transaction id (pay_no)</source>
        <translation>缺少交易号（pay_no）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>has a transaction id longer than 64 characters: %1</source>
        <translation>交易号超过 64 个字符：%1</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>not %1: its header row (line %2) has no %3 column</source>
        <translation>不是%1：表头行（第 %2 行）没有 %3 列</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>not %1: its header row (line %2) has no %3 column (%4)</source>
        <translation>不是%1：表头行（第 %2 行）没有 %3 列（%4）</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>the file (%1) ends at line %2 without %3: it is truncated, download it again</source>
        <translation>文件（%1）在第 %2 行结束，缺少%3：文件不完整，请重新下载</translation>
    </message>
    <message>
        <location filename="../../app/domain/statement/wechatstatement.cpp" line="+20"/>
        <source>its totals rows (总交易单数, ...)</source>
        <translation>汇总行（总交易单数, ...）</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>has no 交易状态 (trade status)</source>
        <translation>缺少交易状态</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>has a 交易时间 that is not a time such as 2026-12-01 10:00:00: %1</source>
        <translation>交易时间不是 2026-12-01 10:00:00 这样的时间：%1</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>has a %1 that is not yuan with at most two decimals: %2</source>
        <translation>%1 不是最多两位小数的元金额：%2</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>the totals row under its totals header</source>
        <translation>汇总表头下的汇总行</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>has a 总交易单数 (number of transactions) that is not a number: %1</source>
        <translation>总交易单数不是数字：%1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>says the bill has %1 transactions (总交易单数), the file lists %2: lines are missing or were added</source>
        <translation>声明账单有 %1 笔交易（总交易单数），文件列出 %2 笔：有行缺失或被添加</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>follows the totals row and is not read</source>
        <translation>位于汇总行之后，未读取</translation>
    </message>
    <message>
        <location filename="../../app/domain/statement/statementarchive.cpp" line="+21"/>
        <source>the archive ends before the statement in it does: the file was damaged or not downloaded whole</source>
        <translation>压缩包在其中的对账单结束之前就结束了：文件已损坏或未下载完整</translation>
    </message>
    <message>
        <location line="+71"/>
        <source>the archive is damaged: the statement in it does not match its checksum</source>
        <translation>压缩包已损坏：其中的对账单与其校验和不符</translation>
    </message>
    <message>
        <location line="+66"/>
        <source>the archive is damaged: %1</source>
        <translation>压缩包已损坏：%1</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>the ZIP archive&apos;s directory is missing or damaged: the file was damaged or not downloaded whole</source>
        <translation>ZIP 压缩包的目录缺失或已损坏：文件已损坏或未下载完整</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>the ZIP archive is in the ZIP64 format, which payops does not read: unzip it and import the CSV file</source>
        <translation>ZIP 压缩包为 payops 不读取的 ZIP64 格式：请解压后导入其中的 CSV 文件</translation>
    </message>
    <message>
        <location line="+97"/>
        <source>the file is an Excel workbook, not a CSV statement: download the statement as CSV, or save the workbook as CSV</source>
        <translation>该文件是 Excel 工作簿，不是 CSV 对账单：请以 CSV 格式下载对账单，或将工作簿另存为 CSV</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>the ZIP archive is empty: it holds no statement</source>
        <translation>ZIP 压缩包是空的：其中没有对账单</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the ZIP archive holds no CSV statement (it holds %1)</source>
        <translation>ZIP 压缩包中没有 CSV 对账单（其中有 %1）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>the ZIP archive holds several CSV statements (%1): unzip it and import each on its own</source>
        <translation>ZIP 压缩包中有多份 CSV 对账单（%1）：请解压后逐份导入</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>%1 in the ZIP archive is encrypted: unzip it with its password and import the CSV file</source>
        <translation>ZIP 压缩包中的 %1 已加密：请用其密码解压后导入 CSV 文件</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 in the ZIP archive is compressed with method %2, which payops does not read: unzip it and import the CSV file</source>
        <translation>ZIP 压缩包中的 %1 使用 payops 不读取的压缩方法 %2：请解压后导入 CSV 文件</translation>
    </message>
</context>
<context>
    <name>payops::StepCard</name>
    <message>
        <location filename="../../ui/playbook/stepcard.cpp" line="+74"/>
        <source>checking …</source>
        <translation>检查中 …</translation>
    </message>
</context>
<context>
    <name>payops::StepWizard</name>
    <message>
        <location filename="../../ui/widgets/stepwizard.cpp" line="+53"/>
        <source>Back</source>
        <translation>返回</translation>
    </message>
</context>
<context>
    <name>payops::StoredRun</name>
    <message>
        <location filename="../../app/domain/inspection/inspectionrun.cpp" line="+87"/>
        <source>the database gave the stored run no id</source>
        <translation>数据库没有给保存的巡检记录分配 ID</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>this account may not record inspections (it needs payops_operator or payops_finance)</source>
        <translation>该账号无权记录巡检（需要 payops_operator 或 payops_finance）</translation>
    </message>
</context>
<context>
    <name>payops::Storm</name>
    <message>
        <location filename="../../app/lab/storm.cpp" line="+28"/>
        <source>this database is not marked as a sandbox: the storm pays orders out on purpose and runs only on a sandbox (payops sandbox, or payops migrate --sandbox on a database of test data)</source>
        <translation>该数据库未标记为沙箱：回调风暴会故意重复发放，只能在沙箱上运行（payops sandbox，或在测试数据库上运行 payops migrate --sandbox）</translation>
    </message>
    <message>
        <location line="+78"/>
        <source>target &apos;%1&apos; is not a URL of the form http://HOST:PORT</source>
        <translation>目标“%1”不是 http://HOST:PORT 形式的 URL</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>target &apos;%1&apos; must start with http:// (the sandbox&apos;s endpoints speak plain HTTP)</source>
        <translation>目标“%1”必须以 http:// 开头（沙箱的回调接口只用明文 HTTP）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>target &apos;%1&apos; has no port: write http://HOST:PORT</source>
        <translation>目标“%1”没有端口：请写成 http://HOST:PORT</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>target &apos;%1&apos; must be only http://HOST:PORT: the storm adds the channel&apos;s path (/callbacks/pay, ...) itself</source>
        <translation>目标“%1”只能是 http://HOST:PORT：回调风暴会自己加上渠道的路径（/callbacks/pay 等）</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>no target: give at least one http://HOST:PORT</source>
        <translation>没有目标：至少给出一个 http://HOST:PORT</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>at most %1 targets</source>
        <translation>最多 %1 个目标</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>the signing secret is empty</source>
        <translation>签名密钥为空</translation>
    </message>
    <message>
        <location line="+4"/>
        <location line="+58"/>
        <source>the number of orders must be 1-%1</source>
        <translation>订单数必须是 1-%1</translation>
    </message>
    <message>
        <location line="-56"/>
        <source>the number of copies must be 1-%1</source>
        <translation>份数必须是 1-%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the gap must be 0-%1 ms</source>
        <translation>间隔必须是 0-%1 毫秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the rate must be 0 (as fast as possible) to %1 orders a second</source>
        <translation>速率必须是 0（尽可能快）到每秒 %1 个订单</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the attempts per callback must be 1-%1</source>
        <translation>每个回调的尝试次数必须是 1-%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the forged deliveries must be 0 to the number of orders (%1)</source>
        <translation>伪造回调的数量必须在 0 到订单数（%1）之间</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>the number of orders to create must be 1-%1</source>
        <translation>要创建的订单数必须是 1-%1</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>the sandbox has no users to own the storm&apos;s orders (load the demo data first)</source>
        <translation>沙箱中没有用户来持有回调风暴的订单（请先加载演示数据）</translation>
    </message>
</context>
<context>
    <name>payops::SwimlaneScene</name>
    <message>
        <location filename="../../ui/widgets/swimlanescene.cpp" line="+87"/>
        <source>Nothing was recorded for this order.</source>
        <translation>此订单没有任何记录。</translation>
    </message>
    <message>
        <location line="+43"/>
        <source>⋯ %1 later</source>
        <translation>⋯ %1 后</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>%1 · gateway</source>
        <translation>%1 · 网关</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 · %2 handler</source>
        <translation>%1 · %2 处理器</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>lock</source>
        <translation>锁</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>lock held %1</source>
        <translation>持锁 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tx</source>
        <translation>事务</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>transaction open %1</source>
        <translation>事务持续 %1</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>⚠ lock released %1 before commit</source>
        <translation>⚠ 锁比提交早 %1 释放</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>upstream</source>
        <translation>上游</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>forwarded; the upstream answered after %1</source>
        <translation>已转发；上游在 %1 后应答</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>forwarded; no answer from the upstream in %1</source>
        <translation>已转发；上游在 %1 内未应答</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>→ upstream answered HTTP %1</source>
        <translation>→ 上游应答 HTTP %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>→ upstream: no answer</source>
        <translation>→ 上游：无应答</translation>
    </message>
</context>
<context>
    <name>payops::SwitchControl</name>
    <message>
        <location filename="../../ui/widgets/switchcontrol.cpp" line="+41"/>
        <source>Resume processing: switch back to NORMAL…</source>
        <translation>恢复处理：切回 NORMAL…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop the bleeding: switch to RECORD_ONLY…</source>
        <translation>止血：切换到 RECORD_ONLY…</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>This database account may not flip the switch (the payops_operator role may).</source>
        <translation>此数据库账号无权切换开关（需要 payops_operator 角色）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The switch has not been read yet.</source>
        <translation>尚未读取到开关状态。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Instances process callbacks again; the backlog stays until processed.</source>
        <translation>实例恢复处理回调；积压回调会保留，直到被处理。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Instances only record callbacks: nothing is paid or issued until you switch back.</source>
        <translation>实例只记录回调：切回之前，不会有订单被标记为已支付，也不会发券或加积分。</translation>
    </message>
</context>
<context>
    <name>payops::SwitchDialog</name>
    <message>
        <location filename="../../ui/dialogs/switchdialog.cpp" line="+10"/>
        <source>Switch the callback endpoint to %1</source>
        <translation>将回调接口切换为 %1</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Why — required; it goes into the audit log (e.g. INC-2041 duplicate coupons)</source>
        <translation>原因（必填，将写入审计日志，例如 INC-2041 重复发券）</translation>
    </message>
    <message>
        <location line="-13"/>
        <source>Continue…</source>
        <translation>继续…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Switch to %1</source>
        <translation>切换为 %1</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Switch to %1 now</source>
        <translation>立即切换为 %1</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Reading which instances are live …</source>
        <translation>正在读取存活的实例…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The live instances could not be read: %1</source>
        <translation>无法读取存活的实例：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No live instance is running now: the switch applies to each one as it starts.</source>
        <translation>当前没有存活的实例：每个实例启动时会应用该开关。</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>It reaches %n live instance(s): %1.</source>
        <translation>
            <numerusform>将作用于 %n 个存活实例：%1。</numerusform>
        </translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;h3&gt;Switch the callback endpoint to %1?&lt;/h3&gt;&lt;p&gt;%2&lt;/p&gt;&lt;p&gt;%3&lt;/p&gt;&lt;p&gt;Reason: &lt;b&gt;%4&lt;/b&gt;&lt;br&gt;The flip is written to the audit log under your database account.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;将回调接口切换为 %1？&lt;/h3&gt;&lt;p&gt;%2&lt;/p&gt;&lt;p&gt;%3&lt;/p&gt;&lt;p&gt;原因：&lt;b&gt;%4&lt;/b&gt;&lt;br&gt;本次切换将以你的数据库账号记入审计日志。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Switching to %1 …</source>
        <translation>正在切换为 %1…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 — waiting</source>
        <translation>%1 — 等待中</translation>
    </message>
    <message>
        <location line="+16"/>
        <location line="+29"/>
        <source>✓ %1 applies version %2</source>
        <translation>✓ %1 已应用版本 %2</translation>
    </message>
    <message>
        <location line="-10"/>
        <source>&lt;b&gt;The switch is now %1&lt;/b&gt; (version %2, was %3).</source>
        <translation>&lt;b&gt;降级开关现为 %1&lt;/b&gt;（版本 %2，原为 %3）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;The switch already was %1&lt;/b&gt; (version %2, set by %3); nothing changed.</source>
        <translation>&lt;b&gt;降级开关本来就是 %1&lt;/b&gt;（版本 %2，由 %3 设置）；未做更改。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>✗ %1 has not acknowledged within %2 s (still at version %3)</source>
        <translation>✗ %1 未在 %2 秒内确认（仍为版本 %3）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>The flip is committed, but the instances could not be watched: %1. Check them on the Instances page.</source>
        <translation>切换已提交，但无法跟踪各实例：%1。请到“实例”页查看。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>No live instance is running: each one applies the switch as it starts.</source>
        <translation>没有存活的实例：每个实例启动时会应用该开关。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Not acknowledged within %1 s: %2. Such an instance may be hung or cut off from the database; until it applies version %3 it may still act on the old mode. Check it on the Instances page.</source>
        <translation>%1 秒内未确认：%2。这样的实例可能已卡死或与数据库断开；在应用版本 %3 之前，它可能仍按旧模式工作。请到“实例”页查看。</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>The switch was not flipped: %1</source>
        <translation>降级开关未切换：%1</translation>
    </message>
</context>
<context>
    <name>payops::Tile</name>
    <message>
        <location filename="../../ui/widgets/tile.cpp" line="+49"/>
        <source>%1 — stale</source>
        <translation>%1 — 已过时</translation>
    </message>
</context>
<context>
    <name>payops::UnmatchedCount</name>
    <message>
        <location filename="../../app/domain/callback/unmatchedcallbacks.cpp" line="+13"/>
        <source>no unmatched callbacks</source>
        <translation>没有未匹配回调</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 unmatched callback(s), 0 of them now with their order</source>
        <translation>%1 个未匹配回调，其中 0 个的订单已出现</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 unmatched callback(s), %2 of them now with their order (%3 yuan waiting to be applied)</source>
        <translation>%1 个未匹配回调，其中 %2 个的订单已出现（%3 元待入账）</translation>
    </message>
</context>
<context>
    <name>payops::UpstreamDrainDialog</name>
    <message>
        <location filename="../../ui/dialogs/upstreamdraindialog.cpp" line="+22"/>
        <source>Forward to the upstream</source>
        <translation>转发给上游</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Forward %1 gateway callback(s) without a final answer to the team&apos;s handler, oldest first, each once, as a gateway forwards them: the platform&apos;s body and headers as received. A pay_no that live traffic is forwarding right now is skipped, and one that gets no final answer stays for the next drain. The drain stops by itself if the switch turns RECORD_ONLY.</source>
        <translation>将 %1 条尚无最终应答的网关回调转发给团队自己的处理器：从最早的开始，每条一次，与网关转发的方式相同——平台的原始报文和请求头原样发送。实时流量正在转发的 pay_no 会被跳过，没有得到最终应答的留待下次回放。若开关切换为 RECORD_ONLY，回放会自行停止。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Upstream URL</source>
        <translation>上游 URL</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Every channel</source>
        <translation>所有渠道</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>WeChat Pay</source>
        <translation>微信支付</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Alipay</source>
        <translation>支付宝</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>payops&apos;s own (/callbacks/pay)</source>
        <translation>payops 自有格式（/callbacks/pay）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Callbacks of</source>
        <translation>回调渠道</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>no limit</source>
        <translation>不限</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> a second</source>
        <translation> 条/秒</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Forwards at most</source>
        <translation>最多转发</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Forward</source>
        <translation>转发</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>The upstream must be an http:// or https:// URL with a host.</source>
        <translation>上游必须是带主机名的 http:// 或 https:// URL。</translation>
    </message>
</context>
<context>
    <name>payops::UpstreamOptionCheck</name>
    <message>
        <location filename="../../app/domain/callback/upstreamclient.cpp" line="+315"/>
        <source>%1 must be an http:// or https:// URL, not &apos;%2&apos;</source>
        <translation>%1 必须是 http:// 或 https:// URL，而不是“%2”</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>--upstream-ca: cannot read %1</source>
        <translation>--upstream-ca：无法读取 %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>--upstream-timeout must be 1-60 seconds</source>
        <translation>--upstream-timeout 必须为 1-60 秒</translation>
    </message>
</context>
<context>
    <name>payops::WatchFeed</name>
    <message>
        <location filename="../../app/domain/money/duplicates/watchfeed.cpp" line="+89"/>
        <source>the duplicate watch has no state row; run payops migrate again</source>
        <translation>重复监控没有状态行，请重新运行 payops migrate</translation>
    </message>
</context>
<context>
    <name>payops::WindowCombo</name>
    <message>
        <location filename="../../ui/pages/windowcombo.cpp" line="+9"/>
        <source>last hour</source>
        <translation>最近一小时</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>last 24 hours</source>
        <translation>最近 24 小时</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>last 7 days</source>
        <translation>最近 7 天</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>last 30 days</source>
        <translation>最近 30 天</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>all time</source>
        <translation>全部时间</translation>
    </message>
</context>
<context>
    <name>payops::cli::AccountsCommand</name>
    <message>
        <location filename="../../app/cli/accountscommand.cpp" line="+43"/>
        <source>List the accounts that hold payops_operator, payops_finance or payops_endpoint, whether it is their default role and whether they may grant it.</source>
        <translation>列出持有 payops_operator、payops_finance 或 payops_endpoint 的账号，以及它是否为其默认角色、能否再授予他人。</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>this account may not read mysql.roles_mapping and mysql.user, where MariaDB keeps who holds which role; run payops accounts as a DBA account such as root, or grant it: GRANT SELECT ON mysql.roles_mapping TO ...; GRANT SELECT ON mysql.user TO ...;</source>
        <translation>此账号无权读取 mysql.roles_mapping 和 mysql.user（MariaDB 在这两张表里记录谁持有哪个角色）；请用 root 等 DBA 账号运行 payops accounts，或为它授权：GRANT SELECT ON mysql.roles_mapping TO ...; GRANT SELECT ON mysql.user TO ...;</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>this account may not read mysql.role_edges and mysql.default_roles, where MySQL keeps who holds which role; run payops accounts as a DBA account such as root</source>
        <translation>此账号无权读取 mysql.role_edges 和 mysql.default_roles（MySQL 在这两张表里记录谁持有哪个角色）；请用 root 等 DBA 账号运行 payops accounts</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>no account holds a payops role (payops grant gives one)</source>
        <translation>没有账号持有 payops 角色（用 payops grant 授予）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ROLE</source>
        <translation>角色</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ACCOUNT</source>
        <translation>账号</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>DEFAULT</source>
        <translation>默认</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ADMIN</source>
        <translation>可授予</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>Print the holders as one JSON object.</source>
        <translation>以一个 JSON 对象输出角色持有者。</translation>
    </message>
</context>
<context>
    <name>payops::cli::AuditCommand</name>
    <message>
        <location filename="../../app/cli/auditcommand.cpp" line="+17"/>
        <source>Verify that the audit log&apos;s hash chain is whole.</source>
        <translation>校验审计日志的哈希链是否完整。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Walk the chain.</source>
        <translation>逐行校验审计链。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>say: payops audit verify --db DSN</source>
        <translation>用法：payops audit verify --db DSN</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>audit log broken at row %1: %2</source>
        <translation>审计日志在第 %1 行断开：%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>audit log intact: %1 row(s); head hash %2</source>
        <translation>审计日志完整：共 %1 行；链头哈希 %2</translation>
    </message>
</context>
<context>
    <name>payops::cli::Cli</name>
    <message>
        <location filename="../../app/cli/cli.cpp" line="+39"/>
        <source>payops %1 - operate a payment-callback endpoint during an incident</source>
        <translation>payops %1 - 事故期间运维支付回调接口</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Usage: payops &lt;command&gt; [options]   (payops &lt;command&gt; --help for its options)</source>
        <translation>用法：payops &lt;命令&gt; [选项]   （payops &lt;命令&gt; --help 查看该命令的选项）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Commands:</source>
        <translation>命令：</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Exit codes: 0 success, 1 refused or failed, 2 bad usage, bad DSN or no connection.</source>
        <translation>退出码：0 成功，1 被拒绝或失败，2 用法错误、DSN 错误或无法连接。</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>error: unknown command &apos;%1&apos; (payops --help lists the commands)</source>
        <translation>错误：未知命令“%1”（payops --help 列出所有命令）</translation>
    </message>
</context>
<context>
    <name>payops::cli::Command</name>
    <message>
        <location filename="../../app/cli/command.cpp" line="+26"/>
        <source>%1

Usage: payops %2 %3</source>
        <translation>%1

用法：payops %2 %3</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Show this help.</source>
        <translation>显示本帮助。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>trace, debug, info, warn, error or off (default: PAYOPS_LOG_LEVEL, else info).</source>
        <translation>trace、debug、info、warn、error 或 off（默认取 PAYOPS_LOG_LEVEL，否则为 info）。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>%1 (see payops %2 --help)</source>
        <translation>%1（见 payops %2 --help）</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>unexpected argument &quot;%1&quot; (see payops %2 --help)</source>
        <translation>多余的参数“%1”（见 payops %2 --help）</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Database: mysql://USER[:PASS]@HOST[:PORT]/DB or mysql://USER@localhost/DB?socket=/path. Default: PAYOPS_DB. The password may come from PAYOPS_DB_PASSWORD.</source>
        <translation>数据库：mysql://USER[:PASS]@HOST[:PORT]/DB 或 mysql://USER@localhost/DB?socket=/path。默认取 PAYOPS_DB。密码可由 PAYOPS_DB_PASSWORD 提供。</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Read from this database instead, usually a replica of --db; the password may come from PAYOPS_READ_DB_PASSWORD. Default: PAYOPS_READ_DB.</source>
        <translation>改为从此数据库读取，通常是 --db 的副本（从库）；密码可取自 PAYOPS_READ_DB_PASSWORD。默认：PAYOPS_READ_DB。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>--read-db: %1</source>
        <translation>--read-db：%1</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>The team&apos;s own tables, described by a TOML mapping file (docs/mapping.md). Default: PAYOPS_MAPPING; without one, payops&apos;s own tables.</source>
        <translation>团队自己的表，由 TOML 映射文件描述（docs/mapping.md）。默认：PAYOPS_MAPPING；未指定时使用 payops 自己的表。</translation>
    </message>
</context>
<context>
    <name>payops::cli::CompensateCommand</name>
    <message>
        <location filename="../../app/cli/compensatecommand.cpp" line="+22"/>
        <source>Compensate duplicate side effects: freeze, write off or reverse, with an audit trail.</source>
        <translation>补偿重复发放的副作用：冻结、核销或冲回，全程记入审计日志。</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Show what would be done and change nothing.</source>
        <translation>只显示将要执行的操作，不做任何改动。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Why (required to act).</source>
        <translation>原因（执行时必填）。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Incident or ticket id (required to act).</source>
        <translation>事故或工单编号（执行时必填）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Only this order (repeatable; default: every order).</source>
        <translation>只处理此订单（可重复给出；默认处理所有订单）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>What a used duplicate coupon becomes: write-off (default) or receivable.</source>
        <translation>已使用的重复优惠券如何处理：write-off（核销，默认）或 receivable（记为应收）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Cash value of 100 points (default 100).</source>
        <translation>100 积分折合的金额，单位分（默认 100）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Approve and run another operator&apos;s pending request (four eyes).</source>
        <translation>批准并执行另一位运维人员待批的申请（双人复核）。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>--used-coupons must be write-off or receivable</source>
        <translation>--used-coupons 只能是 write-off 或 receivable</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>--fen-per-100-points must be a number of at least 0</source>
        <translation>--fen-per-100-points 必须是不小于 0 的数</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>--order must be a positive order id, not &apos;%1&apos;</source>
        <translation>--order 必须是正整数订单 ID，而不是“%1”</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>say --dry-run, or give --reason and --ticket to act</source>
        <translation>请给出 --dry-run，或给出 --reason 和 --ticket 以执行</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>--approve takes a request id, with --reason and --ticket and without --dry-run or --order</source>
        <translation>--approve 需要申请编号，并同时给出 --reason 和 --ticket，不能与 --dry-run 或 --order 同用</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>--used-coupons is for payops&apos;s own tables; with --mapping a used copy is left to finance</source>
        <translation>--used-coupons 只用于 payops 自己的表；使用 --mapping 时，已使用的副本留给财务处理</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>--read-db goes with --dry-run: a compensation plans on --db, where it runs</source>
        <translation>--read-db 只能与 --dry-run 一起使用：补偿在 --db 上规划，也在那里执行</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Planning on the read database %1, which may lag its primary: a real run plans again on the primary (--db) and carries out that plan.</source>
        <translation>在读库 %1 上规划，它可能落后于主库：真正执行时会在主库（--db）上重新规划，并按该规划执行。</translation>
    </message>
    <message>
        <location line="+25"/>
        <location line="+115"/>
        <source>approved request %1 by %2</source>
        <translation>已批准 %2 提交的申请 %1</translation>
    </message>
    <message>
        <location line="-102"/>
        <source>compensated %1, skipped %2 (done by someone else or changed since planned); batch %3</source>
        <translation>已补偿 %1 项，跳过 %2 项（已由他人处理或在计划后发生变化）；批次 %3</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>  user %1&apos;s points balance is now negative</source>
        <translation>  用户 %1 的积分余额现为负数</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>  not kept: %1 %2 of order %3</source>
        <translation>  未保留：订单 %3 的 %1 %2</translation>
    </message>
    <message numerus="yes">
        <location line="+3"/>
        <source>%n duplicate(s) not kept: another cluster node&apos;s transaction rolled their batch back; run the compensation again</source>
        <translation>
            <numerusform>%n 份重复发放未保留：另一集群节点的事务回滚了它们所在的批次；请再次运行补偿</numerusform>
        </translation>
    </message>
    <message>
        <location line="-15"/>
        <source>%1 fen, with the %2 fen this account compensated alone in the four-eyes window, is above the threshold of %3 fen: request %4 waits for another operator (payops compensate %5--approve %4 --reason ... --ticket ...)</source>
        <translation>%1 分加上该账号在双人复核时间窗内已单独补偿的 %2 分，超过阈值 %3 分：申请 %4 等待另一位运维人员批准（payops compensate %5--approve %4 --reason ... --ticket ...）</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>%1: %2 %3 (%4), %5 used and left to finance (%6)</source>
        <translation>%1：%2 条%3（%4），%5 条已使用，留给财务处理（%6）</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>%1 yuan, %2 points</source>
        <translation>%1 元，%2 积分</translation>
    </message>
    <message>
        <location line="+24"/>
        <location line="+9"/>
        <source>to freeze</source>
        <translation>待冻结</translation>
    </message>
    <message>
        <location line="-9"/>
        <location line="+9"/>
        <source>to reverse</source>
        <translation>待冲正</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>frozen</source>
        <translation>已冻结</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>reversed</source>
        <translation>已冲正</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>  left to finance: %1 row %2 of order %3 (%4 fen, %5 points)</source>
        <translation>  留给财务：%1 第 %2 行，订单 %3（%4 分，%5 积分）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>skipped %1 (done by someone else or changed since planned); batch %2</source>
        <translation>跳过 %1 条（已被他人处理，或计划后已变化）；批次 %2</translation>
    </message>
</context>
<context>
    <name>payops::cli::DegradeCommand</name>
    <message>
        <location filename="../../app/cli/degradecommand.cpp" line="+18"/>
        <source>Switch the callback endpoint into record-only mode (on) or back (off).</source>
        <translation>将回调接口切换到只记录（降级）模式（on），或切回正常模式（off）。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>on: RECORD_ONLY, callbacks are only recorded; off: NORMAL.</source>
        <translation>on：RECORD_ONLY，回调只记录；off：NORMAL。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Why (required; goes into the audit log).</source>
        <translation>原因（必填，记入审计日志）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Seconds to wait for every live instance to apply the new version (default 10; 0 does not wait).</source>
        <translation>等待所有在线实例应用新版本的秒数（默认 10；0 表示不等待）。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>say on or off (payops degrade --help)</source>
        <translation>请给出 on 或 off（见 payops degrade --help）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>--reason is required: say why, it goes into the audit log</source>
        <translation>--reason 必填：请说明原因，它会记入审计日志</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>--wait must be 0-3600 seconds</source>
        <translation>--wait 必须在 0 到 3600 秒之间</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>switch is now %1 (version %2, was %3)</source>
        <translation>降级开关现为 %1（版本 %2，原为 %3）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>switch already was %1 (version %2); nothing changed</source>
        <translation>降级开关已是 %1（版本 %2），未做改动</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>  %1 applies version %2</source>
        <translation>  %1 已应用版本 %2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 (still at version %2)</source>
        <translation>%1（仍为版本 %2）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>no live instance is running</source>
        <translation>没有在线运行的实例</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>not acknowledged within %1 s: %2</source>
        <translation>%1 秒内未确认：%2</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>all %1 live instance(s) apply version %2</source>
        <translation>全部 %1 个在线实例已应用版本 %2</translation>
    </message>
</context>
<context>
    <name>payops::cli::DrainCommand</name>
    <message>
        <location filename="../../app/cli/draincommand.cpp" line="+44"/>
        <source>Process at most N callbacks (default: all).</source>
        <translation>最多处理 N 条回调（默认全部）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Drain even while the switch is RECORD_ONLY.</source>
        <translation>即使降级开关为 RECORD_ONLY 也回放。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Apply the UNMATCHED callbacks whose order exists now; the others stay UNMATCHED and are counted.</source>
        <translation>处理订单现已存在的 UNMATCHED 回调；其余仍为 UNMATCHED，只计数。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>--upstream: forward only the callbacks that came in this format, for a gateway with a handler per channel.</source>
        <translation>--upstream：只转发以此格式到达的回调，用于每个渠道各有处理器的网关。</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>--limit must be a number of at least 0</source>
        <translation>--limit 必须是不小于 0 的数</translation>
    </message>
    <message>
        <location line="+106"/>
        <source>the switch is RECORD_ONLY: draining now would process callbacks while the endpoint is degraded. Turn it off first (payops degrade off), or pass --force</source>
        <translation>降级开关为 RECORD_ONLY：此时回放会在回调接口降级期间处理回调。请先关闭降级（payops degrade off），或加 --force</translation>
    </message>
    <message>
        <location line="-73"/>
        <source>processed %1, rejected %2; %3 unmatched callback(s) left, %4 of them still without their order</source>
        <translation>已处理 %1 条，驳回 %2 条；剩余 %3 条未匹配回调，其中 %4 条的订单仍不存在</translation>
    </message>
    <message>
        <location line="+20"/>
        <location line="+116"/>
        <source>stopped: the switch turned RECORD_ONLY while draining</source>
        <translation>已停止：回放期间降级开关切换为 RECORD_ONLY</translation>
    </message>
    <message>
        <location line="-199"/>
        <source>Forward a gateway&apos;s recorded and not yet answered callbacks to this URL, the team&apos;s own handler.</source>
        <translation>把网关已记录、尚未得到最终应答的回调转发到此 URL，即团队自己的处理程序。</translation>
    </message>
    <message>
        <location line="-13"/>
        <source>Apply the recorded callbacks over N connections at once (default: %1).</source>
        <translation>同时通过 N 个连接处理积压回调（默认 %1）。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Claim and apply N recorded callbacks per transaction (default: %1).</source>
        <translation>每个事务认领并处理 N 条积压回调（默认 %1）。</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>--upstream: forward at most N callbacks a second (default: no limit).</source>
        <translation>--upstream：每秒最多转发 N 条回调（默认不限）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>--upstream: forward over N connections at once.</source>
        <translation>--upstream：同时使用 N 个连接转发。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>--upstream: verify its https certificate against this file.</source>
        <translation>--upstream：用此文件校验其 HTTPS 证书。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>--upstream: seconds to wait for each answer.</source>
        <translation>--upstream：每次等待应答的秒数。</translation>
    </message>
    <message>
        <location line="+153"/>
        <source>--channel takes wechatpay, alipay or pay, not &apos;%1&apos;</source>
        <translation>--channel 只接受 wechatpay、alipay 或 pay，而不是“%1”</translation>
    </message>
    <message>
        <location line="-130"/>
        <source>%1 done, %2 left: processed %3, rejected %4, ignored %5, unmatched %6 (%7/s)</source>
        <translation>已完成 %1 条，剩余 %2 条：已处理 %3 条，驳回 %4 条，忽略 %5 条，未匹配 %6 条（每秒 %7 条）</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>processed %1, rejected %2, ignored %3, unmatched %4; %5 left in the backlog (%6 callbacks a second over %7 connection(s))</source>
        <translation>已处理 %1 条，驳回 %2 条，忽略 %3 条，未匹配 %4 条；积压回调剩余 %5 条（每秒 %6 条，%7 个连接）</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>--unmatched drains one callback at a time: it takes neither --connections nor --batch</source>
        <translation>--unmatched 每次只回放一条回调：不接受 --connections 或 --batch</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>--connections must be 1-%1</source>
        <translation>--connections 必须在 1-%1 之间</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>--batch must be 1-%1</source>
        <translation>--batch 必须在 1-%1 之间</translation>
    </message>
    <message>
        <location line="+49"/>
        <source>--rate must be a number of at least 0</source>
        <translation>--rate 必须是不小于 0 的数字</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>--concurrency must be 1-64</source>
        <translation>--concurrency 必须为 1-64</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>--upstream takes neither --unmatched, --force nor --limit</source>
        <translation>--upstream 不能与 --unmatched、--force 或 --limit 一起使用</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>--upstream takes neither --connections nor --batch: its connections are --concurrency</source>
        <translation>--upstream 不接受 --connections 或 --batch：它的连接数由 --concurrency 指定</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>%1/%2: forwarded %3, failed %4, skipped %5 (%6/s)</source>
        <translation>%1/%2：已转发 %3，失败 %4，跳过 %5（%6 条/秒）</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>forwarded %1, failed %2, skipped %3 of %4 to %5</source>
        <translation>共 %4 条：已转发 %1，失败 %2，跳过 %3，目标 %5</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 callback(s) got no final answer from the upstream; they stay for the next drain</source>
        <translation>%1 条回调未从上游得到最终应答；留待下次回放</translation>
    </message>
    <message>
        <location line="-235"/>
        <source>Process the callbacks recorded in record-only mode, or with --unmatched those that arrived before their order, each exactly once; with --upstream forward a gateway&apos;s recorded callbacks to the team&apos;s handler, each exactly once.</source>
        <translation>回放只记录模式下积压的回调；加 --unmatched 时处理先于订单到达的未匹配回调；加 --upstream 时把网关记录的回调转发给团队的处理程序。每条只处理一次。</translation>
    </message>
</context>
<context>
    <name>payops::cli::GrantCommand</name>
    <message>
        <location filename="../../app/cli/grantcommand.cpp" line="+22"/>
        <source>Give an account a payops role and make it the account&apos;s default role, or take it away with --revoke. Run it as an account that administers the roles.</source>
        <translation>为账号授予 payops 角色并设为其默认角色，或用 --revoke 收回。须由管理这些角色的账号运行。</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>--role must be operator, finance or endpoint, not &quot;%1&quot;</source>
        <translation>--role 只能是 operator、finance 或 endpoint，而不是“%1”</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>--account is required, e.g. --account &quot;&apos;alice&apos;@&apos;%&apos;&quot;</source>
        <translation>--account 必填，例如 --account &quot;&apos;alice&apos;@&apos;%&apos;&quot;</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>granted %1 to %2, but could not make it the default role: %3</source>
        <translation>已将 %1 授予 %2，但未能设为默认角色：%3</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>granted %1 to %2; it is the account&apos;s default role, active at login without SET ROLE</source>
        <translation>已将 %1 授予 %2，并设为该账号的默认角色，登录即生效，无需 SET ROLE</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 was its default role before and is no longer active at login; it takes SET ROLE %1 now</source>
        <translation>%1 原是它的默认角色，现在登录时不再生效；需要时请执行 SET ROLE %1</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>%1 does not hold %2; nothing changed</source>
        <translation>%1 未持有 %2，未做改动</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>revoked %1 from %2; the account has no default role now</source>
        <translation>已从 %2 收回 %1；该账号现在没有默认角色</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>revoked %1 from %2</source>
        <translation>已从 %2 收回 %1</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>there is no account %1 on this server; create it first (CREATE USER %1 IDENTIFIED BY &apos;...&apos;)</source>
        <translation>服务器上没有账号 %1，请先创建（CREATE USER %1 IDENTIFIED BY &apos;...&apos;）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>the role %1 does not exist on this server; payops migrate creates it</source>
        <translation>服务器上不存在角色 %1；payops migrate 会创建它</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>%1 does not administer the role %2, and MariaDB lets only a role&apos;s admins grant it: the account that ran payops migrate (it created the roles), or one it granted the role WITH ADMIN OPTION. Run payops grant as that account, or have it run: GRANT %2 TO %3 WITH ADMIN OPTION;</source>
        <translation>%1 不是角色 %2 的管理者，而 MariaDB 只允许角色的管理者授予它：即运行 payops migrate 的账号（角色由它创建），或由它以 WITH ADMIN OPTION 授予该角色的账号。请用那个账号运行 payops grant，或让它执行：GRANT %2 TO %3 WITH ADMIN OPTION;</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>%1 administers %2 but may not set another account&apos;s default role (that needs UPDATE on the mysql schema); nothing changed. Have %1 run GRANT %2 TO &apos;root&apos;@&apos;localhost&apos; WITH ADMIN OPTION; then run payops grant as root</source>
        <translation>%1 可以管理 %2，但无权设置其他账号的默认角色（这需要 mysql 库的 UPDATE 权限），未做改动。请让 %1 执行 GRANT %2 TO &apos;root&apos;@&apos;localhost&apos; WITH ADMIN OPTION;，再以 root 运行 payops grant</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>operator, finance or endpoint (payops-callbackd&apos;s own account).</source>
        <translation>operator（运维）、finance（财务）或 endpoint（payops-callbackd 自己的账号）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The account, as in SQL: &apos;alice&apos;@&apos;%&apos;, alice@localhost; a bare name means any host (&apos;%&apos;).</source>
        <translation>账号，写法同 SQL：&apos;alice&apos;@&apos;%&apos;、alice@localhost；只写用户名表示任意主机（&apos;%&apos;）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Take the role away (and clear it as the default role).</source>
        <translation>收回该角色（并清除其默认角色设置）。</translation>
    </message>
</context>
<context>
    <name>payops::cli::InspectCommand</name>
    <message>
        <location filename="../../app/cli/inspectcommand.cpp" line="+48"/>
        <source>Count live duplicate side effects, orders paid twice by the customer (refunds owed), unmatched callbacks, the backlog and the switch, and store the run; exit 1 on duplicates, refunds owed or unmatched callbacks whose order exists now, 2 on an error. The first run on a database reads its history once (progress on stderr; Ctrl-C stops it, the next run goes on).</source>
        <translation>统计当前重复发放的副作用、客户重复支付的订单（应退款）、未匹配回调、积压回调和降级开关，并保存本次巡检；有重复、应退款或订单已存在的未匹配回调时退出码为 1，出错时为 2。对一个数据库的首次巡检会把历史数据读一遍（进度输出到标准错误输出；按 CTRL+C 可中止，下次巡检接着读）。</translation>
    </message>
    <message>
        <location line="+42"/>
        <source>--points-per-yuan takes a positive whole number</source>
        <translation>--points-per-yuan 需要正整数</translation>
    </message>
    <message>
        <location line="+132"/>
        <source>interrupted at %1 % of the first count of duplicates; run payops inspect again to go on from there</source>
        <translation>首次重复统计在 %1 % 处中断；再次运行 payops inspect 会从中断处继续</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>the first count of duplicates is not done (%1 %): %2</source>
        <translation>首次重复统计尚未完成（%1 %）：%2</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>payops inspect: %1</source>
        <translation>payops inspect：%1</translation>
    </message>
    <message>
        <location line="-105"/>
        <source>payops inspect: warning: this run was not stored: %1</source>
        <translation>payops inspect：警告：本次巡检未能保存：%1</translation>
    </message>
    <message>
        <location line="-29"/>
        <source>--stale-after takes a number of seconds</source>
        <translation>--stale-after 需要一个秒数</translation>
    </message>
    <message>
        <location line="+55"/>
        <source>switch: %1 (version %2)</source>
        <translation>降级开关：%1（版本 %2）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>backlog: %1 recorded callback(s)</source>
        <translation>积压回调：%1 条已记录的回调</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>gateway backlog: %1 callback(s) without the upstream&apos;s final answer; forward them with payops drain --upstream URL</source>
        <translation>网关积压：%1 条回调尚未得到上游的最终应答；用 payops drain --upstream URL 转发</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>unmatched: %1; apply them with payops drain --unmatched</source>
        <translation>未匹配回调：%1；用 payops drain --unmatched 处理</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>unmatched: %1</source>
        <translation>未匹配回调：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>duplicates: %1</source>
        <translation>重复发放：%1</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>paid twice: %1</source>
        <translation>重复支付：%1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>paid twice: %1; refund the second payment to each customer</source>
        <translation>重复支付：%1；请向每位客户退还第二笔付款</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>the replica has no complete count of duplicates yet: run payops inspect on the primary once</source>
        <translation>从库上还没有完整的重复统计：请先在主库上运行一次 payops inspect</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>payops inspect: warning: %1</source>
        <translation>payops inspect：警告：%1</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>%1: %2 group(s), %3 extra copies worth %4 fen</source>
        <translation>%1：%2 组，多出 %3 份，价值 %4 分</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>no live duplicates in the mapped tables</source>
        <translation>映射的表中没有未处理的重复记录</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1; e.g. order(s) %2</source>
        <translation>%1；例如订单 %2</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>payops inspect: first count of duplicates: %1 % of the orders read</source>
        <translation>payops inspect：首次重复统计：已读取 %1 % 的订单</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>With --read-db: call the replica stale past this many seconds behind (default 30).</source>
        <translation>与 --read-db 一起使用：从库落后超过此秒数即视为过时（默认 30）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Print the figures as one JSON object.</source>
        <translation>以一个 JSON 对象输出各项数字。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Cash value of points in money at risk (default 100 = 1 yuan).</source>
        <translation>计算风险金额时积分的折算（默认 100 积分 = 1 元）。</translation>
    </message>
</context>
<context>
    <name>payops::cli::MappingCommand</name>
    <message>
        <location filename="../../app/cli/mappingcommand.cpp" line="+26"/>
        <source>Check a mapping file against the team&apos;s tables: names, types, state values, conditions and indexes; exit 1 on an error in the mapping, 2 when it could not check.</source>
        <translation>对照团队自己的表检查映射文件：名称、类型、状态值、条件和索引；映射有错误时退出码为 1，无法检查时为 2。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Check the mapping.</source>
        <translation>检查映射。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>say: payops mapping check --mapping FILE --db DSN</source>
        <translation>请输入：payops mapping check --mapping FILE --db DSN</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>--mapping FILE is required (or PAYOPS_MAPPING): the file to check</source>
        <translation>需要 --mapping FILE（或 PAYOPS_MAPPING）：要检查的文件</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>%1: %2 error(s), %3 warning(s): fix the errors before using it</source>
        <translation>%1：%2 个错误，%3 个警告：请先修正错误再使用</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1: usable, %2 warning(s)</source>
        <translation>%1：可用，%2 个警告</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1: usable, nothing to warn about</source>
        <translation>%1：可用，没有警告</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Print the problems as one JSON object.</source>
        <translation>以一个 JSON 对象输出问题。</translation>
    </message>
</context>
<context>
    <name>payops::cli::MigrateCommand</name>
    <message>
        <location filename="../../app/cli/migratecommand.cpp" line="+19"/>
        <source>Create or upgrade the payops schema in a database.</source>
        <translation>在数据库中创建或升级 payops 的表结构。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>legacy: the incident&apos;s schema (side effects without keys of their own); current: every side effect keyed. Default: the database&apos;s level, current for a new one.</source>
        <translation>legacy：事故时的表结构（副作用没有自己的唯一索引）；current：每种副作用都有唯一索引。默认沿用数据库当前级别，新数据库为 current。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Mark the database as a sandbox (needed by the unsafe demo handler).</source>
        <translation>将数据库标记为沙箱（不安全的演示处理器需要）。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>--level must be legacy or current, not &apos;%1&apos;</source>
        <translation>--level 只能是 legacy 或 current，而不是“%1”</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>%1 is up to date at level %2</source>
        <translation>%1 已是最新，级别 %2</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>applied %1 migration(s); %2 is at level %3</source>
        <translation>已执行 %1 个迁移；%2 现为级别 %3</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 is marked as a sandbox</source>
        <translation>%1 已标记为沙箱</translation>
    </message>
</context>
<context>
    <name>payops::cli::PostureCommand</name>
    <message>
        <location filename="../../app/cli/posturecommand.cpp" line="+25"/>
        <source>List each defence against paying twice as present, missing or unknown, with what a missing one lets through; exit 1 when any is missing, 2 on an error.</source>
        <translation>列出每项防重复发放的防护措施是已有、缺失还是未知，以及缺失时会放过什么；有缺失时退出码为 1，出错时为 2。</translation>
    </message>
    <message>
        <location line="+52"/>
        <source>%1. Lets through: %2</source>
        <translation>%1。会放过：%2</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Print the defences as one JSON object.</source>
        <translation>以一个 JSON 对象输出防护措施。</translation>
    </message>
</context>
<context>
    <name>payops::cli::ReconcileCommand</name>
    <message>
        <location filename="../../app/cli/reconcilecommand.cpp" line="+36"/>
        <source>paid on the platform, not with us (漏单)</source>
        <translation>平台已支付，我方没有（漏单）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>paid with us, not on the platform (多单)</source>
        <translation>我方已支付，平台没有（多单）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>amount differs</source>
        <translation>金额不符</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>status differs</source>
        <translation>状态不符</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>listed twice by the platform</source>
        <translation>平台重复记录</translation>
    </message>
    <message>
        <location line="+184"/>
        <source>listed %1 times</source>
        <translation>平台记录 %1 次</translation>
    </message>
    <message>
        <location line="-181"/>
        <source>order paid twice by the customer (refund owed)</source>
        <translation>客户重复支付的订单（应退款）</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>Import a platform statement (generic CSV, WeChat Pay trade bill, Alipay business detail) and reconcile it by pay_no; exit 1 on findings or unreadable lines, 2 on an error. The same file imported again is reconciled again, not stored twice.</source>
        <translation>导入平台对账单（通用 CSV、微信支付交易账单、支付宝业务明细）并按 pay_no 对账；发现问题或有无法读取的行时退出码为 1，出错时为 2。同一文件再次导入会重新对账，但不会重复保存。</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>--format takes auto, generic, wechat or alipay, not &apos;%1&apos;</source>
        <translation>--format 只能是 auto、generic、wechat 或 alipay，而不是“%1”</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>--statement FILE is required (the platform&apos;s statement)</source>
        <translation>--statement FILE 必填（平台的对账单）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>statement file %1 does not exist</source>
        <translation>对账单文件 %1 不存在</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>statement %1 is not a regular file</source>
        <translation>对账单 %1 不是普通文件</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>cannot read statement %1: %2</source>
        <translation>无法读取对账单 %1：%2</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>interrupted: nothing of the statement was stored</source>
        <translation>已中断：对账单的内容均未保存</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>payops reconcile: %1 % of the statement read, %2 lines stored</source>
        <translation>payops reconcile：对账单已读取 %1 %，已保存 %2 行</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>format: %1 (%2; reconciled again, nothing stored twice)</source>
        <translation>格式：%1（%2；已重新对账，未重复保存）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>format: %1 (detected) (stored as statement %2)</source>
        <translation>格式：%1（自动识别）（保存为对账单 %2）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>format: %1 (stored as statement %2)</source>
        <translation>格式：%1（保存为对账单 %2）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 to %2 UTC (declared)</source>
        <translation>%1 至 %2 UTC（对账单声明）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 to %2 UTC (first to last payment)</source>
        <translation>%1 至 %2 UTC（首笔到末笔付款）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>unknown (no line has a time): paid-with-us-only not checked</source>
        <translation>未知（没有一行带时间）：未检查多单</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>lines: %1 reconciled, %2 unreadable; channel %3; period %4</source>
        <translation>行数：已对账 %1 行，无法读取 %2 行；渠道 %3；时间段 %4</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>%1 pay_no %2 order %3 platform %4 ours %5 line %6</source>
        <translation>%1 pay_no %2 订单 %3 平台 %4 我方 %5 第 %6 行</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>unreadable line %1: %2</source>
        <translation>无法读取第 %1 行：%2</translation>
    </message>
    <message>
        <location line="+60"/>
        <source>The platform&apos;s statement file: a CSV, or the ZIP or gzip its download gave (read twice: it must be a file).</source>
        <translation>平台的对账单文件：CSV 文件，或平台下载所得的 ZIP 或 gzip 文件（会读取两遍：必须是文件）。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>auto (default: detected from the file), generic, wechat or alipay.</source>
        <translation>auto（默认：从文件识别）、generic、wechat 或 alipay。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Print the result as one JSON object.</source>
        <translation>以一个 JSON 对象输出结果。</translation>
    </message>
</context>
<context>
    <name>payops::cli::ReportCommand</name>
    <message>
        <location filename="../../app/cli/reportcommand.cpp" line="+37"/>
        <source>Write the incident report of a time window as a PDF: when the duplicates began, the switch&apos;s flips, compensations, totals in yuan, reconciliation, charts, audit head.</source>
        <translation>将某个时间窗口的事故报告写成 PDF：重复何时开始、降级开关的切换、补偿、以元计的合计、对账、图表、审计链头。</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>--%1 is required (e.g. 2026-12-02T09:00:00Z)</source>
        <translation>--%1 必填（例如 2026-12-02T09:00:00Z）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>--%1 &apos;%2&apos; is not a time: write it as RFC 3339, e.g. 2026-12-02T09:00:00Z or 2026-12-02T17:00:00+08:00</source>
        <translation>--%1 “%2” 不是时间：请按 RFC 3339 书写，例如 2026-12-02T09:00:00Z 或 2026-12-02T17:00:00+08:00</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>the window is empty: --from must be before --to</source>
        <translation>时间窗口为空：--from 必须早于 --to</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>--out FILE.pdf is required</source>
        <translation>--out FILE.pdf 必填</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>--points-per-yuan must be a whole number from 1 to 1000000</source>
        <translation>--points-per-yuan 必须是 1 到 1000000 之间的整数</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>wrote %1: %2 extra copies on %3 orders, ¥ %4 at risk, ¥ %5 compensated, %6 switch flip(s)</source>
        <translation>已写入 %1：%3 个订单上有 %2 份多余份数，风险金额 ¥ %4，已补偿 ¥ %5，降级开关切换 %6 次</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Start of the window, included (RFC 3339).</source>
        <translation>时间窗口起点，包含（RFC 3339）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>End of the window, excluded (RFC 3339).</source>
        <translation>时间窗口终点，不包含（RFC 3339）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The PDF to write.</source>
        <translation>要写入的 PDF 文件。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The cash value of points (default 100 = 1 yuan).</source>
        <translation>积分的折算（默认 100 积分 = 1 元）。</translation>
    </message>
</context>
<context>
    <name>payops::cli::RoleAccounts</name>
    <message>
        <location filename="../../app/cli/roleaccounts.cpp" line="+76"/>
        <source>--account takes an account as user@host, e.g. &apos;alice&apos;@&apos;%&apos; or alice@localhost, not &quot;%1&quot;</source>
        <translation>--account 需要 user@host 形式的账号，例如 &apos;alice&apos;@&apos;%&apos; 或 alice@localhost，而不是“%1”</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>--account: the user name &quot;%1&quot; may only have letters, digits and _ . - $ (at most 80)</source>
        <translation>--account：用户名“%1”只能包含字母、数字和 _ . - $（最多 80 个字符）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>--account: the host &quot;%1&quot; may only have letters, digits and _ . - % : / (at most 255)</source>
        <translation>--account：主机“%1”只能包含字母、数字和 _ . - % : /（最多 255 个字符）</translation>
    </message>
</context>
<context>
    <name>payops::cli::SandboxCommand</name>
    <message>
        <location filename="../../app/cli/sandboxcommand.cpp" line="+19"/>
        <source>Run the local sandbox database (private MariaDB with demo data), with test keys for the WeChat Pay and Alipay formats and demo statements.</source>
        <translation>运行本地沙箱数据库（带演示数据的私有 MariaDB），附带微信支付和支付宝格式的测试密钥以及演示对账单。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>start, stop or status</source>
        <translation>start、stop 或 status</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Directory of the sandbox (default: %1).</source>
        <translation>沙箱目录（默认：%1）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Also listen on 127.0.0.1:PORT (default: unix socket only).</source>
        <translation>同时监听 127.0.0.1:PORT（默认只用 unix socket）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Do not load the demo data into a new sandbox.</source>
        <translation>新建沙箱时不加载演示数据。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>say start, stop or status (payops sandbox --help)</source>
        <translation>请给出 start、stop 或 status（见 payops sandbox --help）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>--port must be 1-65535</source>
        <translation>--port 必须在 1 到 65535 之间</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>stopped the sandbox in %1</source>
        <translation>已停止 %1 中的沙箱</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the sandbox in %1 was not running</source>
        <translation>%1 中的沙箱未在运行</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>unknown action &apos;%1&apos;: say start, stop or status</source>
        <translation>未知操作“%1”：请给出 start、stop 或 status</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>demo data loaded</source>
        <translation>演示数据已加载</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>sandbox running in %1</source>
        <translation>沙箱在 %1 中运行</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>demo statements (payops reconcile --db DSN --statement FILE): %1, %2</source>
        <translation>演示对账单（payops reconcile --db DSN --statement FILE）：%1、%2</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>test keys in %1 (made once, 0600): WeChat Pay platform key %2 (serial %3), APIv3 key %4, mchid %5, appid %6; Alipay key %7, app_id %8</source>
        <translation>测试密钥在 %1（只生成一次，权限 0600）：微信支付平台公钥 %2（序列号 %3），APIv3 密钥 %4，商户号 %5，appid %6；支付宝公钥 %7，app_id %8</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>payops-callbackd flags for /callbacks/wechatpay and /callbacks/alipay:</source>
        <translation>payops-callbackd 用于 /callbacks/wechatpay 和 /callbacks/alipay 的参数：</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>also listening on 127.0.0.1:%1 as root, with the password kept in %2:</source>
        <translation>同时以 root 在 127.0.0.1:%1 监听，密码保存在 %2：</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>running (pid %1) in %2</source>
        <translation>运行中（pid %1），目录 %2</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>stopped; %1 (the next start recovers from it)</source>
        <translation>已停止；%1（下次启动时会恢复）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>stopped (%1)</source>
        <translation>已停止（%1）</translation>
    </message>
</context>
<context>
    <name>payops::cli::StormCommand</name>
    <message>
        <location filename="../../app/cli/stormcommand.cpp" line="+33"/>
        <source>%1/%2 callbacks done: sent %3, 2xx %4, 4xx %5, 5xx %6, no answer %7, retries %8, never 2xx %9</source>
        <translation>已完成 %1/%2 条回调：发送 %3，2XX %4，4XX %5，5XX %6，无应答 %7，重试 %8，始终未得到 2XX %9</translation>
    </message>
    <message>
        <location line="+47"/>
        <source>Endpoints, comma-separated, each http://HOST:PORT; the copies of an order go round-robin over them.</source>
        <translation>回调接口，逗号分隔，每个为 http://HOST:PORT；同一订单的多份回调轮流发往各接口。</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Orders that get callbacks (default 100).</source>
        <translation>收到回调的订单数（默认 100）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Deliveries per order (default 2; 1: no duplicates).</source>
        <translation>每个订单的投递份数（默认 2；1 表示不重复）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Time between the copies of one order, pattern gap (default 40).</source>
        <translation>gap 模式下同一订单各份之间的间隔（默认 40）。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>concurrent (copies at the same instant on different connections), gap (copies --gap-ms apart), replay (copies %1 s later) or mixed (default).</source>
        <translation>concurrent（各份在同一时刻经不同连接发出）、gap（各份相隔 --gap-ms）、replay（%1 秒后重放）或 mixed（默认）。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Create fresh PENDING orders first (default: the newest existing PENDING ones).</source>
        <translation>先创建新的 PENDING 订单（默认使用现有最新的 PENDING 订单）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Orders started per second (default 0: as fast as possible).</source>
        <translation>每秒开始的订单数（默认 0：尽可能快）。</translation>
    </message>
    <message>
        <location line="-68"/>
        <source>; forged %1, of which accepted %2</source>
        <translation>；伪造 %1 条，其中被接受 %2 条</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Sandbox only: fire signed success callbacks at endpoints the way a platform does (copies, gaps, replays, retries, forged ones), in payops&apos;s JSON or as WeChat Pay or Alipay notifications; exit 1 when stopped, when some never got the platform&apos;s success answer or when a forged one was accepted.</source>
        <translation>仅限沙箱：像支付平台那样向回调接口发送带签名的支付成功回调（多份、间隔、重放、重试、伪造），格式为 payops 的 JSON 或微信支付、支付宝的通知；被中止、有回调始终未得到平台认可的成功应答或有伪造回调被接受时退出码为 1。</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>The wire format: payops (default; its JSON to /callbacks/pay), wechatpay (WeChat Pay API v3 notifications, encrypted and signed, to /callbacks/wechatpay) or alipay (Alipay&apos;s signed form to /callbacks/alipay).</source>
        <translation>回调格式：payops（默认；其 JSON 发往 /callbacks/pay）、wechatpay（加密并签名的微信支付 API v3 通知，发往 /callbacks/wechatpay）或 alipay（支付宝签名的表单，发往 /callbacks/alipay）。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Channel payops: file holding the endpoints&apos; HMAC signing secret.</source>
        <translation>渠道 payops：存放回调接口 HMAC 签名密钥的文件。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Channels wechatpay and alipay: the folder of the platform keys and ids that payops sandbox start made (default: %1).</source>
        <translation>渠道 wechatpay 和 alipay：payops sandbox start 生成的平台密钥和标识所在的文件夹（默认：%1）。</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Retry any answer but the platform&apos;s success (a non-2xx; for Alipay also one that does not say success) and no answer, with back-off (100 ms doubling, at most 5 s), as platforms do.</source>
        <translation>像支付平台一样，对平台不认可为成功的应答（非 2XX；对支付宝还包括内容不是 success 的应答）和无应答退避重试（从 100 毫秒起翻倍，最长 5 秒）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Attempts per callback with --retry-5xx (default 5).</source>
        <translation>使用 --retry-5xx 时每条回调的尝试次数（默认 5）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The first N orders also get one delivery with a bad signature, sent once with their first copy, as an attacker would (default 0).</source>
        <translation>前 N 个订单另外收到一条签名错误的回调，与第一份同时发送且只发一次，就像攻击者那样（默认 0）。</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>%1 is not marked as a sandbox: the storm pays orders out on purpose and runs only on a sandbox</source>
        <translation>%1 未标记为沙箱：回调风暴会故意重复发放，只能在沙箱上运行</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>only %1 PENDING order(s), %2 asked for: pass --create-orders to create fresh ones</source>
        <translation>只有 %1 个 PENDING 订单，需要 %2 个：加 --create-orders 创建新订单</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>payops storm: created %1 PENDING orders</source>
        <translation>payops storm：已创建 %1 个 PENDING 订单</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>payops storm: %1</source>
        <translation>payops storm：%1</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>stopped %1 storm on %2 order(s) (created) in %3 s: %4</source>
        <translation>已中止 %1 回调风暴，%2 个订单（新建），用时 %3 秒：%4</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>stopped %1 storm on %2 order(s) in %3 s: %4</source>
        <translation>已中止 %1 回调风暴，%2 个订单，用时 %3 秒：%4</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>finished %1 storm on %2 order(s) (created) in %3 s: %4</source>
        <translation>已完成 %1 回调风暴，%2 个订单（新建），用时 %3 秒：%4</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>finished %1 storm on %2 order(s) in %3 s: %4</source>
        <translation>已完成 %1 回调风暴，%2 个订单，用时 %3 秒：%4</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>stopped before the end</source>
        <translation>未完成即中止</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 forged callback(s) got the platform&apos;s success answer</source>
        <translation>%1 条伪造回调得到了平台认可的成功应答</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 callback(s) never got a 2xx answer</source>
        <translation>%1 条回调始终未得到 2XX 应答</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>--targets is required: one or more http://HOST:PORT, comma-separated</source>
        <translation>--targets 必填：一个或多个 http://HOST:PORT，逗号分隔</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>--targets: %1</source>
        <translation>--targets：%1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>--channel must be payops, wechatpay or alipay</source>
        <translation>--channel 必须是 payops、wechatpay 或 alipay</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>the secret file %1 is empty</source>
        <translation>密钥文件 %1 为空</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>--keys-dir %1: %2</source>
        <translation>--keys-dir %1：%2</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>--%1 must be a whole number from %2 to %3</source>
        <translation>--%1 必须是 %2 到 %3 之间的整数</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>--rate must be 0 (as fast as possible) to %1 orders a second</source>
        <translation>--rate 必须在 0（尽可能快）到每秒 %1 个订单之间</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>--pattern must be concurrent, gap, replay or mixed</source>
        <translation>--pattern 只能是 concurrent、gap、replay 或 mixed</translation>
    </message>
</context>
<context>
    <name>payops::console::ConnectionProfile</name>
    <message>
        <location filename="../../app/console/connectionprofile.cpp" line="+24"/>
        <source>A user and a database are needed.</source>
        <translation>需要填写用户和数据库。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>A socket reaches one server: give host and port to list servers to fail over to.</source>
        <translation>套接字只能连到一台服务器：要列出故障切换的服务器，请填写主机和端口。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&apos;%1&apos; in the servers to fail over to is not HOST[:PORT].</source>
        <translation>故障切换服务器中的“%1”不是 HOST[:PORT] 格式。</translation>
    </message>
</context>
<context>
    <name>payops::console::InspectionScheduler</name>
    <message>
        <location filename="../../app/console/inspectionschedule.cpp" line="+96"/>
        <source>new duplicate side effects (%1 open group(s), %2 yuan at risk)</source>
        <translation>新增重复发放（%1 个未处理重复组，风险金额 %2 元）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 late payment(s) to apply</source>
        <translation>%1 笔迟到支付待入账</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 order(s) paid twice by the customer (%2 yuan to refund)</source>
        <translation>%1 个订单被客户重复支付（应退款 %2 元）</translation>
    </message>
</context>
<context>
    <name>payops::console::LocalInstances</name>
    <message>
        <location filename="../../app/console/localinstances.cpp" line="+126"/>
        <source>cannot create the folder %1</source>
        <translation>无法创建目录 %1</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>cannot write the secret file %1: %2</source>
        <translation>无法写入密钥文件 %1：%2</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>unknown handler &apos;%1&apos;: it is safe or unsafe-demo</source>
        <translation>未知的处理器“%1”：只能是 safe 或 unsafe-demo</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>start 1 to %1 instances, not %2</source>
        <translation>只能启动 1 到 %1 个实例，不能是 %2 个</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>payops-callbackd not found at %1; set PAYOPS_CALLBACKD to its path</source>
        <translation>在 %1 找不到 payops-callbackd；请把 PAYOPS_CALLBACKD 设为它的路径</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>refusing the unsafe-demo handler: database &apos;%1&apos; is not marked as a sandbox. It pays out twice on purpose; run it only on a sandbox</source>
        <translation>拒绝启动 unsafe-demo 处理器：数据库“%1”未标记为沙箱。它会故意重复发放，只能在沙箱上运行</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>cannot tell whether the database is a sandbox: %1</source>
        <translation>无法判断数据库是否为沙箱：%1</translation>
    </message>
    <message>
        <location line="+61"/>
        <location line="+13"/>
        <source>%1 did not start: %2</source>
        <translation>%1 未能启动：%2</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>exit code %1</source>
        <translation>退出码 %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 stopped: %2</source>
        <translation>%1 已停止：%2</translation>
    </message>
    <message>
        <location line="+79"/>
        <source>no instances to restart: start some first</source>
        <translation>没有可重启的实例：请先启动实例</translation>
    </message>
</context>
<context>
    <name>payops::console::OrderSelection</name>
    <message>
        <location filename="../../app/console/orderlist.cpp" line="+14"/>
        <source>orders now in %1</source>
        <translation>当前处于 %1 的订单</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>orders with rejected %1 → %2</source>
        <translation>%1 → %2 被拒绝过的订单</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>orders with accepted %1 → %2</source>
        <translation>已完成 %1 → %2 的订单</translation>
    </message>
</context>
<context>
    <name>payops::console::Playbook</name>
    <message>
        <location filename="../../app/console/playbook.cpp" line="+37"/>
        <source>This database has no duplicate watch: migrate it with payops migrate.</source>
        <translation>此数据库没有重复发放监测：请用 payops migrate 迁移。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 duplicate group(s) on %2 order(s), ¥%3 at risk</source>
        <translation>%2 个订单上有 %1 组重复，风险金额 ¥%3</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>The simulation pays orders in payops&apos;s own tables, not in the team&apos;s.</source>
        <translation>模拟只在 payops 自己的表中支付订单，不涉及团队的表。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Your own handler pays these orders, with no payops gateway in front of it: payops&apos;s switch does not reach it. Pause it in your service.</source>
        <translation>这些订单由你们自己的处理器支付，前面没有 payops 网关：payops 的开关管不到它。请在你们的服务中暂停它。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Your own handler receives these orders&apos; callbacks: payops recorded none of them to drain.</source>
        <translation>这些订单的回调由你们自己的处理器接收：payops 没有记录其中任何一条，无可回放。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>(%1 of payops&apos;s own wait on the Backlog page.)</source>
        <translation>（payops 自己的 %1 条在“积压回调”页等待处理。）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 callback(s) wait for your handler: resume forwarding, then drain them to it (Backlog page).</source>
        <translation>%1 条回调在等待转发给你们的处理器：先恢复转发，再把它们回放给处理器（“积压回调”页）。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 callback(s) wait for your handler&apos;s final answer: drain them to it (Backlog page).</source>
        <translation>%1 条回调在等待你们处理器的最终应答：把它们回放给处理器（“积压回调”页）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The gateways forward normally; no callback waits for your handler.</source>
        <translation>网关正常转发；没有回调在等待你们的处理器。</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Each side effect&apos;s table has a unique key on (order, key): the database refuses a second copy.</source>
        <translation>每个副作用的表都有（订单, 键）的唯一键：数据库会拒绝第二份。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>No unique key on (order, key) for: %1. Your DBA adds them after compensating; payops never alters your schema.</source>
        <translation>以下副作用没有（订单, 键）的唯一键：%1。由你们的 DBA 在补偿后添加；payops 从不修改你们的表结构。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Not a sandbox: the simulation creates and pays orders, so it runs on a sandbox only.</source>
        <translation>不是沙箱：模拟会创建并支付订单，只能在沙箱上运行。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The storm is firing callbacks.</source>
        <translation>回调风暴正在发送回调。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Reproduced: an unsafe-demo instance released its lock before its commit in the last hour.</source>
        <translation>已重现：最近一小时内有 unsafe-demo 实例在提交前释放了锁。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 unsafe-demo instance(s) running; fire a storm at them.</source>
        <translation>%1 个 unsafe-demo 实例正在运行；向它们发起回调风暴。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No unsafe-demo instance is running.</source>
        <translation>没有运行中的 unsafe-demo 实例。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>%1 duplicate copies found, all compensated since.</source>
        <translation>发现过 %1 份重复，均已补偿。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>First count of the duplicates: %1 % of the orders read.</source>
        <translation>首次统计重复发放：已读取 %1 % 的订单。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Watching: no side effect of the mapping issued twice so far.</source>
        <translation>监测中：目前映射中没有副作用被重复发放。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Watching: no coupon or points row issued twice so far.</source>
        <translation>监测中：目前没有重复发放的优惠券或积分记录。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>RECORD_ONLY (version %1): %2 of %3 live instance(s) have not confirmed it yet.</source>
        <translation>RECORD_ONLY（版本 %1）：%3 个在线实例中有 %2 个尚未确认。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>RECORD_ONLY (version %1); no instance is running.</source>
        <translation>RECORD_ONLY（版本 %1）；没有运行中的实例。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>RECORD_ONLY (version %1), confirmed by all %2 live instance(s).</source>
        <translation>RECORD_ONLY（版本 %1），全部 %2 个在线实例均已确认。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>NORMAL again, with the fix in: nothing can pay twice any more.</source>
        <translation>已恢复 NORMAL，修复已生效：不会再重复发放。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>NORMAL: callbacks are processed by a handler that can pay twice.</source>
        <translation>NORMAL：回调由可能重复发放的处理器处理。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Nothing to scope: no duplicates found.</source>
        <translation>无需圈定影响面：未发现重复发放。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Counting: %1 % of the orders read; the figures grow until then.</source>
        <translation>统计中：已读取 %1 % 的订单；读完前数字还会增长。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>No live duplicates left; %1 copies were compensated.</source>
        <translation>已无未补偿的重复发放；已补偿 %1 份。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>No affected order to look at yet.</source>
        <translation>暂无可查看的受影响订单。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Order %1: %2 released its lock %3 ms before its commit.</source>
        <translation>订单 %1：%2 在提交前 %3 ms 释放了锁。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Order %1: no payops trace (your handler paid it). Set its copies&apos; times beside your handler&apos;s logs.</source>
        <translation>订单 %1：payops 没有它的追踪记录（由你们的处理器支付）。请把其各份副本的时间与你们处理器的日志对照。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Order %1&apos;s traces show no lock released before its commit; open its evidence.</source>
        <translation>订单 %1 的回调追踪未显示提交前释放锁；请打开其证据查看。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Every duplicate compensated (%1 copies).</source>
        <translation>所有重复发放均已补偿（%1 份）。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nothing to compensate.</source>
        <translation>无需补偿。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 four-eyes request(s) wait for another operator.</source>
        <translation>%1 个双人复核申请等待另一位运维批准。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 copies compensated; %2 left.</source>
        <translation>已补偿 %1 份；剩余 %2 份。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>no unsafe-demo instance runs</source>
        <translation>没有运行中的 unsafe-demo 实例</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 unsafe-demo instance(s) still run</source>
        <translation>仍有 %1 个 unsafe-demo 实例在运行</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the last hour&apos;s traces hold the lock across the commit</source>
        <translation>最近一小时的回调追踪显示锁持有到提交之后</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>no callback in the last hour shows how the handler locks</source>
        <translation>最近一小时没有能看出处理器加锁方式的回调</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the last hour&apos;s traces release the lock before the commit: deploy the safe handler</source>
        <translation>最近一小时的回调追踪显示在提交前释放锁：请部署 safe 处理器</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Side-effect keys in place</source>
        <translation>副作用幂等键已建立</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Side-effect keys missing</source>
        <translation>缺少副作用幂等键</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>%1 recorded callback(s) wait. Drain after the fix: processing them before it would pay twice again.</source>
        <translation>%1 条已记录的回调在等待。修复后再回放：修复前处理会再次重复发放。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 recorded callback(s) wait: resume processing, then drain them.</source>
        <translation>%1 条已记录的回调在等待：先恢复处理，再回放。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 recorded callback(s) and %2 matched late one(s) wait for a drain.</source>
        <translation>%1 条已记录的回调和 %2 条后来匹配到订单的回调等待回放。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Processing normally; no recorded callback waits.</source>
        <translation>正常处理中；没有等待的已记录回调。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>The first count of duplicates is at %1 %.</source>
        <translation>首次统计重复发放已完成 %1 %。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>payops inspect: clean.</source>
        <translation>payops inspect：无问题。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 late payment(s) to apply</source>
        <translation>%1 笔迟到的支付待处理</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 order(s) paid twice by the customer, a refund owed</source>
        <translation>%1 个订单被客户重复支付，应退款</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>payops inspect finds: %1.</source>
        <translation>payops inspect 发现：%1。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>An incident report was written from this console.</source>
        <translation>已从本控制台生成事故报告。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>No duplicates seen yet: nothing to report.</source>
        <translation>尚未发现重复发放：无需报告。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Clean: write the report for finance (File, Incident report).</source>
        <translation>已无问题：为财务生成报告（文件 &gt; 事故报告）。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Write it once the inspection is green.</source>
        <translation>巡检通过后再生成。</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>to do</source>
        <translation>待办</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>in progress</source>
        <translation>进行中</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>not available</source>
        <translation>不可用</translation>
    </message>
</context>
<context>
    <name>payops::console::StormRunner</name>
    <message>
        <location filename="../../app/console/stormrunner.cpp" line="+39"/>
        <source>a storm is already running: stop it first</source>
        <translation>已有回调风暴在运行：请先停止</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>no PENDING orders are left to pay: tick &quot;Create fresh PENDING orders first&quot;</source>
        <translation>没有可支付的 PENDING 订单了：请勾选“先创建新的 PENDING 订单”</translation>
    </message>
</context>
<context>
    <name>payops::db::Connection</name>
    <message>
        <location filename="../../app/db/connection.cpp" line="+98"/>
        <source>access denied for user &apos;%1&apos; at %2 (wrong user or password)</source>
        <translation>用户“%1”在 %2 被拒绝访问（用户名或密码错误）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>user &apos;%1&apos; may not use database &apos;%2&apos;</source>
        <translation>用户“%1”无权使用数据库“%2”</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>database &apos;%1&apos; does not exist at %2</source>
        <translation>%2 上不存在数据库“%1”</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>cannot reach the database server at %1 (is it running?)</source>
        <translation>无法连接 %1 上的数据库服务器（它在运行吗？）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>cannot connect to %1 as &apos;%2&apos;: %3</source>
        <translation>无法以“%2”连接 %1：%3</translation>
    </message>
    <message>
        <location line="+60"/>
        <source>the Qt MySQL driver (QMYSQL) is not installed; install libqt6sql6-mysql</source>
        <translation>未安装 Qt MySQL 驱动（QMYSQL），请安装 libqt6sql6-mysql</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>%1:%2 does not take writes (a replica, or read-only)</source>
        <translation>%1:%2 不接受写入（是副本，或处于只读状态）</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>%1:%2 and %3:%4 both take writes: two primaries. Set read_only = ON on the one that is not the primary (after a failover, the former primary), or take it out of the list</source>
        <translation>%1:%2 和 %3:%4 都接受写入：出现了两个主库。请在不是主库的那一台（故障切换后即原主库）上设置 read_only = ON，或把它从列表中移除</translation>
    </message>
</context>
<context>
    <name>payops::db::Error</name>
    <message>
        <location filename="../../app/db/dberror.cpp" line="+114"/>
        <source>the database refused: you may not read this table</source>
        <translation>数据库拒绝：你无权读取此表</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the database refused: you may not change this table</source>
        <translation>数据库拒绝：你无权修改此表</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the database refused: you may not use this table</source>
        <translation>数据库拒绝：你无权使用此表</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>the database refused: you may not read table %1</source>
        <translation>数据库拒绝：你无权读取表 %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the database refused: you may not change table %1</source>
        <translation>数据库拒绝：你无权修改表 %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the database refused: you may not use table %1</source>
        <translation>数据库拒绝：你无权使用表 %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>the database refused: you may not read column %1 of table %2</source>
        <translation>数据库拒绝：你无权读取表 %2 的列 %1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the database refused: you may not change column %1 of table %2</source>
        <translation>数据库拒绝：你无权修改表 %2 的列 %1</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>the database refused: you may not use column %1 of table %2</source>
        <translation>数据库拒绝：你无权使用表 %2 的列 %1</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>the database refused: this account may not use the database</source>
        <translation>数据库拒绝：该账号无权使用此数据库</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>access denied (wrong user or password)</source>
        <translation>拒绝访问（用户名或密码错误）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the database does not exist</source>
        <translation>数据库不存在</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>the database refused: this account lacks a privilege the operation needs</source>
        <translation>数据库拒绝：该账号缺少此操作所需的权限</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the database refused: you may not run %1</source>
        <translation>数据库拒绝：你无权运行 %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the database refused: %1</source>
        <translation>数据库拒绝：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>table %1 is missing from the database (run payops migrate?)</source>
        <translation>数据库中缺少表 %1（需要运行 payops migrate？）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the database has no column %1: its schema is not the one this program expects</source>
        <translation>数据库没有列 %1：其表结构与本程序预期的不同</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>that row already exists (a duplicate key)</source>
        <translation>该行已存在（键重复）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>that row already exists (duplicate key %1)</source>
        <translation>该行已存在（重复的键 %1）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the change conflicts with related rows (a foreign key)</source>
        <translation>该修改与关联的行冲突（外键）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>a value does not fit its column</source>
        <translation>某个值不符合其列的要求</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a value does not fit column %1</source>
        <translation>某个值不符合列 %1 的要求</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>a value breaks one of the database&apos;s checks</source>
        <translation>某个值违反了数据库的检查约束</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>lock wait timeout: another session holds the rows; try again</source>
        <translation>锁等待超时：另一个会话持有这些行，请重试</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>a deadlock with another session undid the change; try again</source>
        <translation>与另一个会话发生死锁，修改已回滚，请重试</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the statement was interrupted</source>
        <translation>语句被中断</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the statement took longer than the server allows</source>
        <translation>语句执行时间超过了服务器允许的上限</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the database server has too many connections</source>
        <translation>数据库服务器连接数过多</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the database server is shutting down</source>
        <translation>数据库服务器正在关闭</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the database is read-only</source>
        <translation>数据库是只读的</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>cannot reach the database server (is it running?)</source>
        <translation>无法连接数据库服务器（它在运行吗？）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>lost the connection to the database</source>
        <translation>与数据库的连接已断开</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the database driver failed (the log has its message)</source>
        <translation>数据库驱动出错（详情见日志）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the database refused the operation (error %1)</source>
        <translation>数据库拒绝了该操作（错误 %1）</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <location filename="../../app/db/dbworkerback.cpp" line="+56"/>
        <source>the database job failed with an unknown error</source>
        <translation>数据库任务因未知错误失败</translation>
    </message>
</context>
<context>
    <name>payops::db::Migrator</name>
    <message>
        <location filename="../../app/db/migrator.cpp" line="+46"/>
        <source>another payops migrate is running on database &apos;%1&apos;; try again when it ends</source>
        <translation>数据库“%1”上正在运行另一个 payops migrate，请等它结束后重试</translation>
    </message>
    <message>
        <location line="+65"/>
        <source>cannot read bundled migration %1</source>
        <translation>无法读取内置迁移 %1</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>migration %1 is applied to this database but unknown to this build of payops (the database is newer than this program)</source>
        <translation>迁移 %1 已应用到该数据库，但此版本的 payops 不认识它（数据库比本程序新）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>migration %1 was changed after it was applied to this database (checksum differs); restore the file or write a new migration</source>
        <translation>迁移 %1 在应用到该数据库后被修改过（校验和不同）；请恢复该文件或编写新的迁移</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>refusing %1: it requires &apos;%2&apos;, which this program cannot check</source>
        <translation>拒绝执行 %1：它要求“%2”，本程序无法检查</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>refusing %1: %2</source>
        <translation>拒绝执行 %1：%2</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>migration %1 failed</source>
        <translation>迁移 %1 失败</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>this database is at level current; it cannot go back to legacy</source>
        <translation>该数据库处于 current 级别，不能退回 legacy</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>applying %1</source>
        <translation>正在应用 %1</translation>
    </message>
</context>
<context>
    <name>payops::db::NamedLock</name>
    <message>
        <location filename="../../app/db/namedlock.cpp" line="+15"/>
        <source>lock name longer than 64 characters: %1</source>
        <translation>锁名超过 64 个字符：%1</translation>
    </message>
</context>
<context>
    <name>payops::mapping::Check</name>
    <message>
        <location filename="../../app/domain/mapping/mappingcheck.cpp" line="+122"/>
        <source>table %1 does not exist in database %2 (or this account may not see it)</source>
        <translation>数据库 %2 中不存在表 %1（或该账号看不到它）</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>table %1 has no column %2</source>
        <translation>表 %1 没有列 %2</translation>
    </message>
    <message>
        <location line="+10"/>
        <location line="+258"/>
        <source>%1.%2 is %3, not an integer column</source>
        <translation>%1.%2 是 %3，不是整数列</translation>
    </message>
    <message>
        <location line="-247"/>
        <source>%1.%2 is %3, not DATETIME or TIMESTAMP</source>
        <translation>%1.%2 是 %3，不是 DATETIME 或 TIMESTAMP</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>%1.%2 is %3, but yuan needs a DECIMAL with 2 decimal places</source>
        <translation>%1.%2 是 %3，但 yuan 需要 2 位小数的 DECIMAL</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1.%2 is %3, but %4 needs an integer column%5</source>
        <translation>%1.%2 是 %3，但 %4 需要整数列%5</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> (a DECIMAL with 2 places is unit &quot;yuan&quot;)</source>
        <translation>（2 位小数的 DECIMAL 对应单位 &quot;yuan&quot;）</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>%1 has no index leading with (%2): each refresh would read about %3 row(s)</source>
        <translation>%1 没有以 (%2) 开头的索引：每次刷新约读取 %3 行</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>is not valid SQL (the server stops near &quot;%1&quot;)</source>
        <translation>不是有效的 SQL（服务器在 &quot;%1&quot; 附近停下）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>names column %1, which %2 has not</source>
        <translation>引用了列 %1，但 %2 没有该列</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>not checked: this account lacks %1 on %2, which the check needs (and compensation too)</source>
        <translation>未检查：该账号缺少 %2 上的 %1 权限，检查需要它（补偿也需要）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>is refused by the server: %1</source>
        <translation>被服务器拒绝：%1</translation>
    </message>
    <message numerus="yes">
        <location line="+59"/>
        <source>not given: each refresh of the state counts reads every order of its window again, %n order(s) for the last 24 hours; name the column %1 keeps its last change in (gmt_modified, updated_at) to read only what changed</source>
        <translation>
            <numerusform>未给出：状态计数每次刷新都会重新读取时间窗口内的全部订单，最近 24 小时为 %n 个订单；写上 %1 记录最后修改时间的列（gmt_modified、updated_at），即可只读取变化的部分</numerusform>
        </translation>
    </message>
    <message>
        <location line="+16"/>
        <source>%1.%2 is %3, neither an integer nor a text column</source>
        <translation>%1.%2 是 %3，既不是整数列也不是文本列</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>%1.%2 is %3, so states are numbers, not strings: %4</source>
        <translation>%1.%2 是 %3，因此状态值应为数字而不是字符串：%4</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1.%2 is %3, so states are strings, not numbers: %4</source>
        <translation>%1.%2 是 %3，因此状态值应为字符串而不是数字：%4</translation>
    </message>
    <message numerus="yes">
        <location line="+26"/>
        <source>%1 (%n order(s))</source>
        <translation>
            <numerusform>%1（%n 个订单）</numerusform>
        </translation>
    </message>
    <message>
        <location line="+4"/>
        <source>values in %1.%2 that no state names, shown as themselves: %3</source>
        <translation>%1.%2 中有未映射到任何状态的值，将按原值显示：%3</translation>
    </message>
    <message numerus="yes">
        <location line="+36"/>
        <source>&quot;%1&quot; (%n payment(s))</source>
        <translation>
            <numerusform>“%1”（%n 笔支付）</numerusform>
        </translation>
    </message>
    <message>
        <location line="+4"/>
        <source>values in %1.%2 that no channel names, so no WeChat Pay or Alipay statement finds their payments left out: %3 (name them in [payments.channels])</source>
        <translation>%1.%2 中有未对应任何渠道的值，对账单漏列这些支付（多单）时，微信支付或支付宝对账都发现不了：%3（请在 [payments.channels] 中写明）</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>%1.%2 is not AUTO_INCREMENT: the watch reads past the last id seen and would miss rows written below it</source>
        <translation>%1.%2 不是 AUTO_INCREMENT：监视从上次看到的 ID 往后读，会漏掉写在它之前的行</translation>
    </message>
</context>
<context>
    <name>payops::mapping::MappedCompensation</name>
    <message>
        <location filename="../../app/domain/mapping/mappedcompensation.cpp" line="+121"/>
        <source>this account may not read %1, which compensating %2 needs: the team&apos;s DBA grants it with GRANT SELECT ON %1 TO the account</source>
        <translation>此账号不能读取 %1，而补偿 %2 需要它：请团队的 DBA 执行 GRANT SELECT ON %1 TO 该账号</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>this account may not %1 %2, which compensating %3 needs: the team&apos;s DBA grants it with GRANT %1 ON %2 TO the account; nothing was changed</source>
        <translation>此账号不能对 %2 执行 %1，而补偿 %3 需要它：请团队的 DBA 执行 GRANT %1 ON %2 TO 该账号；未做任何改动</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>this account may not record a compensation in payops&apos;s own database: it needs the role payops_operator; nothing was changed</source>
        <translation>此账号不能在 payops 自己的数据库中记录补偿：需要 payops_operator 角色；未做任何改动</translation>
    </message>
    <message>
        <location line="+294"/>
        <source>a compensation needs a reason and a ticket</source>
        <translation>补偿必须填写原因和工单号</translation>
    </message>
</context>
<context>
    <name>payops::mapping::MappedRequests</name>
    <message>
        <location filename="../../app/domain/mapping/mappedrequest.cpp" line="+54"/>
        <source>request %1 is for payops&apos;s own tables: approve it without a mapping</source>
        <translation>申请 %1 针对 payops 自己的表：请不带映射批准</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>request %1 was made through another mapping file (SHA-256 %2…), not %3 (%4…): approve it with the very file it was made with</source>
        <translation>申请 %1 是通过另一个映射文件（SHA-256 %2…）提交的，而不是 %3（%4…）：请用提交它时的那个文件批准</translation>
    </message>
</context>
<context>
    <name>payops::mapping::MappedWatch</name>
    <message>
        <location filename="../../app/domain/mapping/mappedwatch.cpp" line="+235"/>
        <source>as the primary last refreshed them (read from a replica)</source>
        <translation>主库上次刷新时的数字（从副本读取）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>this database has no duplicate watch for mapped tables yet: run payops migrate (migration 0020) with an account that may change the schema</source>
        <translation>该数据库还没有映射表的重复监控：请用有权修改表结构的账号运行 payops migrate（迁移 0020）</translation>
    </message>
</context>
<context>
    <name>payops::mapping::Mapping</name>
    <message>
        <location filename="../../app/domain/mapping/mapping.cpp" line="-90"/>
        <source>%1:%2: [%3] %4</source>
        <translation>%1:%2: [%3] %4</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1: [%2] %3</source>
        <translation>%1: [%2] %3</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>&apos;%1&apos; is missing</source>
        <translation>缺少 &apos;%1&apos;</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&apos;%1&apos; must be a non-empty string</source>
        <translation>&apos;%1&apos; 必须是非空字符串</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>it is empty</source>
        <translation>它是空的</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>it is longer than 64 characters</source>
        <translation>它超过 64 个字符</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>it ends with a space</source>
        <translation>它以空格结尾</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>it holds a control character</source>
        <translation>它含有控制字符</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>it holds a character outside Unicode&apos;s Basic Multilingual Plane</source>
        <translation>它含有 Unicode 基本多文种平面以外的字符</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&apos;%1&apos; cannot be a MariaDB name: %2</source>
        <translation>&apos;%1&apos; 不能用作 MariaDB 名称：%2</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>&apos;%1&apos; must be &quot;yuan&quot;, &quot;fen&quot; or &quot;points&quot;, not &quot;%2&quot;</source>
        <translation>&apos;%1&apos; 必须是 &quot;yuan&quot;、&quot;fen&quot; 或 &quot;points&quot;，而不是 &quot;%2&quot;</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&apos;%1&apos; must be &quot;yuan&quot; or &quot;fen&quot;, not &quot;%2&quot;</source>
        <translation>&apos;%1&apos; 必须是 &quot;yuan&quot; 或 &quot;fen&quot;，而不是 &quot;%2&quot;</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>unknown key &apos;%1&apos;</source>
        <translation>未知的键 &apos;%1&apos;</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>&apos;%1&apos; is not a payops state (%2)</source>
        <translation>&apos;%1&apos; 不是 payops 的状态（%2）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>the value of %1 must be a number or a string</source>
        <translation>%1 的值必须是数字或字符串</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 and %2 have the same value %3</source>
        <translation>%1 与 %2 的值相同：%3</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>PAID must be named: it is the state a payment leads to</source>
        <translation>必须给出 PAID：支付成功后订单进入该状态</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>&apos;%1&apos; is not a payops channel (%2)</source>
        <translation>“%1”不是 payops 的渠道（%2）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the value of %1 must be a non-empty string or a list of them</source>
        <translation>%1 的值必须是非空字符串，或由非空字符串组成的列表</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>&quot;%1&quot; is named twice: a payment is of one channel</source>
        <translation>“%1”出现了两次：一笔支付只属于一个渠道</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>[payments.channels] needs &apos;channel&apos;: the column they are in</source>
        <translation>[payments.channels] 需要 &apos;channel&apos;：这些值所在的列</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>&apos;key&apos; is missing (use key = [] when an order has one row)</source>
        <translation>缺少 &apos;key&apos;（每个订单只有一行时写 key = []）</translation>
    </message>
    <message>
        <location line="+3"/>
        <location line="+5"/>
        <source>&apos;key&apos; must be an array of column names</source>
        <translation>&apos;key&apos; 必须是列名数组</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>&apos;reverse_set&apos; must be a table of column = SQL expression</source>
        <translation>&apos;reverse_set&apos; 必须是“列 = SQL 表达式”的表</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>reverse_set.%1 must be a non-empty SQL expression</source>
        <translation>reverse_set.%1 必须是非空的 SQL 表达式</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>name &quot;%1&quot; must be lowercase letters, digits and _, at most 32, starting with a letter</source>
        <translation>名称 &quot;%1&quot; 只能由小写字母、数字和 _ 组成，以字母开头，最多 32 个字符</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>&apos;compensate&apos; must be &quot;freeze&quot; or &quot;reverse&quot;, not &quot;%1&quot;</source>
        <translation>&apos;compensate&apos; 必须是 &quot;freeze&quot; 或 &quot;reverse&quot;，而不是 &quot;%1&quot;</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&apos;freeze&apos; is for compensate = &quot;freeze&quot;</source>
        <translation>&apos;freeze&apos; 只用于 compensate = &quot;freeze&quot;</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&apos;reverse_set&apos; is for compensate = &quot;reverse&quot;</source>
        <translation>&apos;reverse_set&apos; 只用于 compensate = &quot;reverse&quot;</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>side_effects must be written as [[side_effects]] tables</source>
        <translation>side_effects 必须写成 [[side_effects]] 表</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>two side effects are named &quot;%1&quot;</source>
        <translation>有两个副作用都名为 &quot;%1&quot;</translation>
    </message>
    <message>
        <location line="+78"/>
        <source>%1:%2: not TOML: %3</source>
        <translation>%1:%2: 不是有效的 TOML：%3</translation>
    </message>
    <message>
        <location line="+31"/>
        <location line="+7"/>
        <source>cannot read the mapping file %1: %2</source>
        <translation>无法读取映射文件 %1：%2</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the mapping file %1 may be changed by other users (mode %2): its conditions are SQL that compensation runs, so make it writable by its owner only (chmod 644 %1)</source>
        <translation>映射文件 %1 可被其他用户修改（权限 %2）：其中的条件是补偿会执行的 SQL，请设为只有所有者可写（chmod 644 %1）</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>the mapping file %1 is larger than 1 MiB: is it the right file?</source>
        <translation>映射文件 %1 超过 1 MiB：是不是选错了文件？</translation>
    </message>
</context>
</TS>
