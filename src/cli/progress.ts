/**
 * A progress bar for long `quarry` commands — reuse it for any command with a known or unknown amount of
 * work. It draws on stderr, and only when stderr is a terminal: piped or redirected output (scripts,
 * tests, `--json`) never sees it. Redraws at most `REDRAW_INTERVAL_MS` apart; `finish` clears the line.
 *
 *   indexing   [##########··········]  52%  3,120/6,000  1,204/s
 */

/** Least time between two redraws, in ms. */
export const REDRAW_INTERVAL_MS = 100;
/** Width of the bar itself, in characters. */
export const BAR_WIDTH = 24;

export class ProgressBar {
  readonly #label: string;
  readonly #out: NodeJS.WriteStream;
  readonly #enabled: boolean;
  readonly #started = Date.now();
  readonly #decimals: number;
  readonly #unit: string;
  #last = 0;
  #drawn = false;

  /** `enabled` defaults to "stderr is a TTY"; pass false for `--json`. */
  constructor(label: string, options: { enabled?: boolean; stream?: NodeJS.WriteStream; unit?: string; decimals?: number } = {}) {
    this.#label = label;
    this.#unit = options.unit ? ` ${options.unit}` : '';
    this.#decimals = options.decimals ?? 0;
    this.#out = options.stream ?? process.stderr;
    this.#enabled = (options.enabled ?? true) && this.#out.isTTY === true;
  }

  /** `done` of `total` units (`total` unknown: a counter); `detail` is appended (e.g. a second count). */
  update(done: number, total?: number, detail = ''): void {
    if (!this.#enabled) return;
    const now = Date.now();
    if (now - this.#last < REDRAW_INTERVAL_MS && !(total !== undefined && done >= total)) return;
    this.#last = now;
    const rate = done / Math.max(0.001, (now - this.#started) / 1000);
    const n = (x: number) => x.toLocaleString('en-US', { minimumFractionDigits: this.#decimals, maximumFractionDigits: this.#decimals });
    let line = this.#label.padEnd(10);
    if (total !== undefined && total > 0) {
      const frac = Math.min(1, Math.max(0, done / total));
      const fill = Math.round(frac * BAR_WIDTH);
      line += ` [${'#'.repeat(fill)}${'·'.repeat(BAR_WIDTH - fill)}] ${String(Math.floor(frac * 100)).padStart(3)}%  ${n(done)}/${n(total)}${this.#unit}`;
    } else {
      line += `  ${n(done)}${this.#unit}`;
    }
    line += `  ${n(rate)}${this.#unit}/s`;
    if (detail) line += `  ${detail}`;
    const width = Math.max(20, (this.#out.columns || 80) - 1);
    this.#out.write(`\r${line.slice(0, width).padEnd(width)}`);
    this.#drawn = true;
  }

  /** Clears the bar's line (call before printing anything else, and at the end). */
  clear(): void {
    if (!this.#drawn) return;
    const width = Math.max(20, (this.#out.columns || 80) - 1);
    this.#out.write(`\r${' '.repeat(width)}\r`);
    this.#drawn = false;
  }

  finish(): void {
    this.clear();
  }
}
