/** The page's stylesheet: system fonts, no external assets. */
export const styles = `
:root { color-scheme: light; --ink: #1d2330; --muted: #5d6675; --line: #d9dee7; --panel: #ffffff;
  --bg: #f3f5f9; --accent: #2952cc; --ok: #1a7f37; --bad: #c62828; --warn: #a15c00; --info: #2952cc; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
  background: var(--bg); }
header { display: flex; align-items: center; gap: 16px; padding: 14px 24px; background: #1d2330; color: #fff; }
header h1 { margin: 0; font-size: 18px; font-weight: 600; letter-spacing: .2px; }
header .spacer { flex: 1; }
.pill { display: inline-block; padding: 2px 10px; border-radius: 999px; font-size: 12px; font-weight: 600;
  background: #5d6675; color: #fff; }
.pill.live { background: var(--ok); }
.pill.reconnecting { background: var(--warn); }
main { max-width: 1100px; margin: 0 auto; padding: 20px 24px 40px; }
section.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 16px 20px;
  margin-bottom: 18px; }
h2 { font-size: 16px; margin: 0 0 12px; }
h3 { font-size: 15px; margin: 0; }
h4 { font-size: 13px; margin: 14px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .4px; }
form#auth { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
form#auth label { font-weight: 600; }
input[type=password] { flex: 1; min-width: 260px; padding: 7px 10px; border: 1px solid var(--line);
  border-radius: 6px; font: inherit; }
button { padding: 7px 14px; border: 1px solid var(--accent); border-radius: 6px; background: var(--accent);
  color: #fff; font: inherit; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
.error { color: var(--bad); margin: 8px 0 0; }
.hint { color: var(--muted); margin: 6px 0 0; font-size: 13px; }
table { width: 100%; border-collapse: collapse; font-size: 14px; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .4px; }
code { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #eef1f6;
  padding: 1px 5px; border-radius: 4px; word-break: break-all; }
td.nowrap code { white-space: nowrap; word-break: normal; }
.registration { border-top: 1px solid var(--line); padding-top: 14px; margin-top: 14px; }
.registration:first-of-type { border-top: 0; margin-top: 0; padding-top: 0; }
.registration .title { display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; }
.badge { font-size: 12px; padding: 1px 8px; border-radius: 4px; background: #e6ebf5; color: var(--accent);
  font-weight: 600; }
.operation { margin: 10px 0 0 4px; }
.operation h4 { text-transform: none; letter-spacing: 0; font-size: 14px; color: var(--ink); }
ol.timeline { list-style: none; margin: 0; padding: 0 0 0 14px; border-left: 3px solid var(--line); }
ol.timeline li { position: relative; padding: 5px 0 5px 10px; display: flex; gap: 10px; flex-wrap: wrap;
  align-items: baseline; }
ol.timeline li::before { content: ""; position: absolute; left: -21px; top: 11px; width: 11px; height: 11px;
  border-radius: 50%; background: var(--info); border: 2px solid #fff; }
ol.timeline li.terminal-ok::before { background: var(--ok); }
ol.timeline li.terminal-bad::before { background: var(--bad); }
ol.timeline li.waiting::before { background: var(--warn); }
ol.timeline li.fresh { animation: flash 1.6s ease-out; }
@keyframes flash { from { background: #fff6c8; } to { background: transparent; } }
.status { font-weight: 700; min-width: 110px; }
time { color: var(--muted); font-variant-numeric: tabular-nums; font-size: 13px; }
.publications { font-size: 12px; color: var(--muted); }
.publications.over { color: var(--bad); font-weight: 700; }
ol.failures { list-style: none; margin: 0; padding: 0; }
ol.failures li { display: flex; gap: 10px; flex-wrap: wrap; align-items: baseline; padding: 5px 8px;
  border-left: 3px solid var(--bad); background: #fdf1f1; margin-bottom: 4px; border-radius: 0 4px 4px 0; }
ol.failures code.code { background: #f8d7d7; color: var(--bad); font-weight: 700; }
.empty { color: var(--muted); font-style: italic; margin: 6px 0; }
`
