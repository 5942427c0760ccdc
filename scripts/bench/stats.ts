/**
 * Summary statistics and table printing for the benchmarks. Figures are reported as medians of
 * repeated runs, with ratios against a baseline measured in the same run.
 *
 * @module
 */

/** Median, minimum and maximum of a set of samples. */
export interface Summary {
  /** Median (mean of the two middle samples for an even count). */
  median: number;
  /** Smallest sample. */
  min: number;
  /** Largest sample. */
  max: number;
  /** Number of samples. */
  n: number;
}

function requireSamples(samples: readonly number[]): void {
  if (samples.length === 0) throw new RangeError("No samples: run the benchmark at least once.");
}

/** Median of `samples`; throws a RangeError when there are none. */
export function median(samples: readonly number[]): number {
  requireSamples(samples);
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Smallest of `samples`; throws a RangeError when there are none. */
export function min(samples: readonly number[]): number {
  requireSamples(samples);
  return Math.min(...samples);
}

/** Largest of `samples`; throws a RangeError when there are none. */
export function max(samples: readonly number[]): number {
  requireSamples(samples);
  return Math.max(...samples);
}

/** Median, min, max and count of `samples`. */
export function summarize(samples: readonly number[]): Summary {
  return { median: median(samples), min: min(samples), max: max(samples), n: samples.length };
}

/** `value / baseline` formatted as e.g. `1.72×`; `–` when the baseline is zero. */
export function formatRatio(value: number, baseline: number): string {
  return baseline > 0 ? `${(value / baseline).toFixed(2)}×` : "–";
}

/** Milliseconds with one decimal, e.g. `31.4 ms`. */
export function formatMs(ms: number): string {
  return `${ms.toFixed(1)} ms`;
}

/** A byte count in KB (1 KB = 1024 bytes) or MB, e.g. `27.3 KB`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** A summary as `median (min–max)` with the given unit formatter. */
export function formatSummary(s: Summary, format: (v: number) => string = formatMs): string {
  return `${format(s.median)} (${format(s.min)}–${format(s.max)})`;
}

/** A Markdown table from a header row and data rows (cells are escaped for `|`). */
export function markdownTable(header: readonly string[], rows: readonly string[][]): string {
  const esc = (cell: string) => cell.replaceAll("|", "\\|");
  const line = (cells: readonly string[]) => `| ${cells.map(esc).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
