/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * The analysis views of a session in `kimi vis`: the decision path, the integrity check, the
 * per-tool statistics and the usage chart (an inline SVG with axis labels and a table that
 * screen readers read). Each item that concerns a wire record offers to show it in the timeline.
 *
 * @module
 */
import type { JSX } from "preact";
import { useMemo } from "preact/hooks";
import type { VisEvent } from "./timeline.ts";
import {
  axisTicks,
  checkIntegrity,
  decisionPath,
  formatDuration,
  timeAxis,
  toolStats,
  type UsagePoint,
  usageSeries,
} from "./vis_analysis.ts";

/** Shows a wire record (by index) in the timeline. */
export type ShowRecord = (index: number) => void;

/** A share of 0–1 as a percentage with at most two decimals: `0.12%`, `50%`. */
export function formatPercent(share: number): string {
  return `${Number((share * 100).toFixed(2))}%`;
}

/** The decision path of every turn that called a tool. */
export function DecisionPathView(
  { events, onShow }: { events: VisEvent[]; onShow: ShowRecord },
): JSX.Element {
  const turns = useMemo(() => decisionPath(events), [events]);
  if (turns.length === 0) return <p class="muted">No tool call was recorded in this session.</p>;
  return (
    <div class="vis-decisions">
      {turns.map((t) => (
        <section key={t.n} class="vis-decision-turn" aria-label={`Turn ${t.n} decision path`}>
          <h3>
            Turn {t.n} · {t.links.length} tool call{t.links.length === 1 ? "" : "s"}
            {t.input && <span class="user-text">{` · ${t.input}`}</span>}
          </h3>
          <ol class="vis-chain">
            {t.links.map((l) => (
              <li key={l.call.index} class="vis-link">
                {l.thinking && (
                  <button
                    type="button"
                    class="vis-node thinking"
                    onClick={() => onShow(l.thinking!.indices[0])}
                  >
                    <b>Thinking</b> <span>{l.thinking.text}</span>
                  </button>
                )}
                <button
                  type="button"
                  class="vis-node call"
                  onClick={() =>
                    onShow(l.call.index)}
                >
                  <b>{l.call.name}</b> <code>{l.call.args}</code>
                </button>
                {l.result
                  ? (
                    <button
                      type="button"
                      class={`vis-node result ${l.result.error ? "error" : "ok"}`}
                      onClick={() => onShow(l.result!.index)}
                    >
                      <b>{l.result.error ? "Error" : "Success"}</b> ·{" "}
                      {formatDuration(l.result.durationSec)}
                      {l.result.output && <span>{` · ${l.result.output}`}</span>}
                    </button>
                  )
                  : <p class="vis-node result missing">No result recorded</p>}
              </li>
            ))}
          </ol>
        </section>
      ))}
    </div>
  );
}

/** The integrity check: its findings, or that none was found. */
export function IntegrityView(
  { events, skipped, onShow }: { events: VisEvent[]; skipped: number; onShow: ShowRecord },
): JSX.Element {
  const findings = useMemo(() => checkIntegrity(events, { skippedLines: skipped }), [
    events,
    skipped,
  ]);
  if (findings.length === 0) {
    return (
      <p class="vis-integrity-ok" role="status">
        No problem found in {events.length} record{events.length === 1 ? "" : "s"}.
      </p>
    );
  }
  return (
    <div class="vis-integrity">
      <p role="status">
        {findings.length} finding{findings.length === 1 ? "" : "s"} in {events.length} records.
      </p>
      <ul aria-label="Integrity findings">
        {findings.map((f, i) => (
          <li key={i} class={`vis-finding ${f.severity}`}>
            <span class="badge">{f.severity === "error" ? "Error" : "Warning"}</span>{" "}
            <span class="vis-finding-text">{f.message}</span>
            {f.index >= 0 && (
              <>
                {" "}
                <button type="button" class="link" onClick={() => onShow(f.index)}>
                  Show record #{f.index}
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Per-tool statistics of the session. */
export function ToolStatsView({ events }: { events: VisEvent[] }): JSX.Element {
  const stats = useMemo(() => toolStats(events), [events]);
  if (stats.length === 0) return <p class="muted">No tool call was recorded in this session.</p>;
  return (
    <table class="vis-table vis-tool-stats">
      <caption class="sr-only">Tool calls of this session by tool</caption>
      <thead>
        <tr>
          <th scope="col">Tool</th>
          <th scope="col">Calls</th>
          <th scope="col">Errors</th>
          <th scope="col">No result</th>
          <th scope="col">Total</th>
          <th scope="col">Mean</th>
          <th scope="col">Max</th>
        </tr>
      </thead>
      <tbody>
        {stats.map((s) => (
          <tr key={s.name}>
            <th scope="row">{s.name}</th>
            <td>{s.calls}</td>
            <td>{s.errors}</td>
            <td>{s.pending}</td>
            <td>{formatDuration(s.totalSec)}</td>
            <td>{formatDuration(s.meanSec)}</td>
            <td>{formatDuration(s.maxSec)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Past this many points a series is drawn as a line only (the table keeps every value). */
const MAX_MARKERS = 300;
const W = 640;
const H = 220;
const PAD = { left: 64, right: 32, top: 12, bottom: 40 };

interface Series {
  label: string;
  cls: string;
  values: (number | null)[];
}

function LineChart(
  { title, points, series, yLabel, yFormat }: {
    title: string;
    points: UsagePoint[];
    series: Series[];
    yLabel: string;
    yFormat: (v: number) => string;
  },
): JSX.Element {
  const xAxis = timeAxis(Math.max(...points.map((p) => p.timeSec), 0));
  const xTicks = xAxis.ticks;
  const yMax = Math.max(
    0,
    ...series.flatMap((s) => s.values.filter((v): v is number => v !== null)),
  );
  const yTicks = axisTicks(yMax);
  const xEnd = xTicks.at(-1) || 1;
  const yEnd = yTicks.at(-1) || 1;
  const x = (t: number) => PAD.left + (t / xEnd) * (W - PAD.left - PAD.right);
  const y = (v: number) => H - PAD.bottom - (v / yEnd) * (H - PAD.top - PAD.bottom);
  return (
    <figure class="vis-chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`${title} chart (values in the table below)`}
      >
        <g class="axis">
          <line x1={PAD.left} y1={H - PAD.bottom} x2={W - PAD.right} y2={H - PAD.bottom} />
          <line x1={PAD.left} y1={PAD.top} x2={PAD.left} y2={H - PAD.bottom} />
          {xTicks.map((t, i) => (
            <text key={`x${t}`} x={x(t)} y={H - PAD.bottom + 16} text-anchor="middle">
              {xAxis.labels[i]}
            </text>
          ))}
          {yTicks.map((v) => (
            <g key={`y${v}`}>
              <line class="grid" x1={PAD.left} y1={y(v)} x2={W - PAD.right} y2={y(v)} />
              <text x={PAD.left - 6} y={y(v) + 4} text-anchor="end">{yFormat(v)}</text>
            </g>
          ))}
          <text
            class="axis-title"
            x={(PAD.left + W - PAD.right) / 2}
            y={H - 4}
            text-anchor="middle"
          >
            Time since the session's first record
          </text>
          <text
            class="axis-title"
            x={12}
            y={(PAD.top + H - PAD.bottom) / 2}
            text-anchor="middle"
            transform={`rotate(-90 12 ${(PAD.top + H - PAD.bottom) / 2})`}
          >
            {yLabel}
          </text>
        </g>
        {series.map((s) => {
          const pts = points.flatMap((p, i) =>
            s.values[i] === null ? [] : [[x(p.timeSec), y(s.values[i]!), p, s.values[i]!] as const]
          );
          return (
            <g key={s.label} class={`series ${s.cls}`}>
              <polyline points={pts.map(([px, py]) => `${px},${py}`).join(" ")} />
              {pts.length <= MAX_MARKERS &&
                pts.map(([px, py, p, v]) => (
                  <circle key={p.index} cx={px} cy={py} r={3.5} data-index={p.index}>
                    <title>
                      {`${s.label}: ${yFormat(v)} at ${
                        p.timeSec.toFixed(2)
                      } s (record #${p.index})`}
                    </title>
                  </circle>
                ))}
            </g>
          );
        })}
      </svg>
      <figcaption>
        {title}
        {series.length > 1 && (
          <span class="legend">
            {series.map((s) => <span key={s.label} class={`key ${s.cls}`}>{s.label}</span>)}
          </span>
        )}
      </figcaption>
    </figure>
  );
}

/** Context and token usage over time: two charts and the table of their values. */
export function UsageView({ events }: { events: VisEvent[] }): JSX.Element {
  const points = useMemo(() => usageSeries(events), [events]);
  if (points.length === 0) return <p class="muted">No usage was reported in this session.</p>;
  const hasTokens = points.some((p) => p.input !== null);
  return (
    <div class="vis-usage">
      <LineChart
        title="Context usage"
        points={points}
        series={[{ label: "Context", cls: "context", values: points.map((p) => p.context) }]}
        yLabel="Context used"
        yFormat={formatPercent}
      />
      {hasTokens && (
        <LineChart
          title="Tokens per step"
          points={points}
          series={[
            { label: "Input", cls: "input", values: points.map((p) => p.input) },
            { label: "Output", cls: "output", values: points.map((p) => p.output) },
          ]}
          yLabel="Tokens"
          yFormat={(v) => String(v)}
        />
      )}
      <table class="vis-table vis-usage-table">
        <caption>Usage reported by each status update</caption>
        <thead>
          <tr>
            <th scope="col">Record</th>
            <th scope="col">Time</th>
            <th scope="col">Context</th>
            <th scope="col">Input tokens</th>
            <th scope="col">Output tokens</th>
          </tr>
        </thead>
        <tbody>
          {points.map((p) => (
            <tr key={p.index}>
              <th scope="row">#{p.index}</th>
              <td>{p.timeSec.toFixed(2)} s</td>
              <td>{p.context === null ? "–" : formatPercent(p.context)}</td>
              <td>{p.input ?? "–"}</td>
              <td>{p.output ?? "–"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
