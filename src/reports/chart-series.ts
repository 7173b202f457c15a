/**
 * How many columns a balance chart's dates are folded into when there are more dates than that:
 * the small multiples of a report are 460 px wide, their plot about 300 px, so a column is about
 * two pixels — finer than a person reads, and a chart's size no longer grows with its range.
 */
export const CHART_COLUMNS = 150;

/** A point of a chart's line; `gapBefore`: a date before it (after the previous point) has no balance, so the line breaks there. */
export interface ChartPoint {
  date: string;
  balance: bigint;
  gapBefore?: boolean;
}

/** The column (0 to columns - 1) the `index`-th of `dateCount` dates falls in. */
export function columnOf(index: number, dateCount: number, columns = CHART_COLUMNS): number {
  return Math.floor((index * columns) / dateCount);
}

/**
 * One series of a chart folded into columns as its balances go by, in date order: of each run of
 * consecutive dates within a column only the lowest and the highest balance are kept (in date
 * order), so a one-day spike is still drawn, and memory holds a few points per column whatever
 * the range. A date without a balance ends a run: the point after it starts a new line.
 */
export class SeriesDownsampler {
  readonly points: ChartPoint[] = [];
  private low: ChartPoint | undefined;
  private high: ChartPoint | undefined;
  private lowIndex = 0;
  private highIndex = 0;
  private lastIndex = -1;
  private column = -1;
  private gapBefore = false;

  constructor(
    private readonly dateCount: number,
    private readonly columns = CHART_COLUMNS,
  ) {}

  /** The balance of the `index`-th date of the chart; indexes must rise. */
  add(index: number, date: string, balance: bigint): void {
    const column = columnOf(index, this.dateCount, this.columns);
    if (this.lastIndex >= 0 && (index !== this.lastIndex + 1 || column !== this.column)) {
      this.flush();
      this.gapBefore = index !== this.lastIndex + 1;
    }
    this.column = column;
    this.lastIndex = index;
    // Ties keep the earliest date.
    if (this.low === undefined || balance < this.low.balance) {
      this.low = { date, balance };
      this.lowIndex = index;
    }
    if (this.high === undefined || balance > this.high.balance) {
      this.high = { date, balance };
      this.highIndex = index;
    }
  }

  /** Every point kept, once all balances were added. */
  finish(): ChartPoint[] {
    this.flush();
    return this.points;
  }

  private flush(): void {
    const { low, high } = this;
    if (low === undefined || high === undefined) return;
    const kept = low === high ? [low] : this.lowIndex < this.highIndex ? [low, high] : [high, low];
    if (this.gapBefore) kept[0] = { ...kept[0]!, gapBefore: true };
    this.points.push(...kept);
    this.low = undefined;
    this.high = undefined;
    this.gapBefore = false;
  }
}
