// The last minutes of the place for the charts: the server's history, a
// sample a second, as one series a shard. Pure.

import type { History } from './api.js';

/** Samples kept: five minutes at one a second. */
export const MAX_SAMPLES = 300;

/** What a chart can show. */
export type Metric = 'players' | 'latenessP99Ms';

/** One shard's values over time: [ms since the epoch, value]. */
export interface Series {
  readonly id: number;
  readonly points: readonly (readonly [number, number])[];
}

interface Sample {
  readonly atMs: number;
  readonly shards: readonly { readonly id: number; readonly players: number; readonly latenessP99Ms: number }[];
}

/** The samples, oldest first. */
export class HistoryModel {
  private samples: Sample[] = [];

  /** Takes the server's history (replacing what was kept). */
  replace(history: History): void {
    this.samples = history.samples.slice(-MAX_SAMPLES).map((s) => ({ atMs: s.atMs, shards: s.shards }));
  }

  /** Each shard's series of `metric`, by id; a shard absent from a sample has no point there. */
  series(metric: Metric): Series[] {
    const byId = new Map<number, [number, number][]>();
    for (const s of this.samples) {
      for (const shard of s.shards) {
        let points = byId.get(shard.id);
        if (!points) byId.set(shard.id, (points = []));
        points.push([s.atMs, shard[metric]]);
      }
    }
    return [...byId].sort(([a], [b]) => a - b).map(([id, points]) => ({ id, points }));
  }

  /** The first and last sample times, ms; null without samples. */
  span(): readonly [number, number] | null {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    return first && last ? [first.atMs, last.atMs] : null;
  }
}
