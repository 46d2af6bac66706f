// Small line charts of the last minutes (players, tick lateness): one SVG
// with a line a shard, its colour the shard's in the table. The geometry is
// pure (tested); the drawing builds SVG elements (no markup strings).

import { formatShardId } from '../../src/net/shard-id.js';
import type { Series } from './history.js';

/** A shard's colour, the same in the table and the charts. */
export function shardColor(id: number): string {
  const palette = ['#4cc9f0', '#f72585', '#b5e48c', '#ffb703', '#9d4edd', '#fb8500', '#06d6a0', '#ef476f'];
  return palette[Math.abs(id) % palette.length] ?? '#4cc9f0';
}

/** A round upper bound for a scale that must show `v`: 1, 2 or 5 times a power of ten (at least 1). */
export function niceMax(v: number): number {
  if (!Number.isFinite(v) || v <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

/** Chart size, px (the SVG scales to its box). */
export interface Frame {
  readonly width: number;
  readonly height: number;
}

/**
 * The SVG path of `points` ([time ms, value]) with time `t0..t1` across the
 * width and `0..yMax` up the height; a gap of more than `gapMs` between two
 * points lifts the pen. Empty without points.
 */
export function linePath(points: readonly (readonly [number, number])[], t0: number, t1: number, yMax: number, frame: Frame, gapMs: number): string {
  const span = Math.max(1, t1 - t0);
  const x = (t: number): number => ((t - t0) / span) * frame.width;
  const y = (v: number): number => frame.height - (Math.min(Math.max(v, 0), yMax) / yMax) * frame.height;
  let d = '';
  let prev: number | null = null;
  for (const [t, v] of points) {
    const cmd = prev === null || t - prev > gapMs ? 'M' : 'L';
    d += `${d ? ' ' : ''}${cmd}${x(t).toFixed(1)} ${y(v).toFixed(1)}`;
    prev = t;
  }
  return d;
}

const SVG = 'http://www.w3.org/2000/svg';

/**
 * Draws `series` into `figure` (replacing the previous drawing), the time
 * axis from `span[0]` to `span[1]` ms (points before it left out); `unit`
 * follows the scale's top value.
 */
export function drawChart(figure: HTMLElement, series: readonly Series[], span: readonly [number, number] | null, unit: string, gapMs: number): void {
  const frame: Frame = { width: 300, height: 80 };
  const doc = figure.ownerDocument;
  figure.querySelector('svg')?.remove();
  figure.querySelector('.legend')?.remove();
  const shown = span ? series.map((s) => ({ id: s.id, points: s.points.filter(([t]) => t >= span[0]) })) : series;
  const svg = doc.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${frame.width} ${frame.height}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('role', 'img');
  const top = niceMax(Math.max(0, ...shown.flatMap((s) => s.points.map(([, v]) => v))));
  const label = figure.querySelector('figcaption')?.textContent ?? 'chart';
  svg.setAttribute('aria-label', `${label}: scale 0 to ${top}${unit}`);
  for (const s of shown) {
    const path = doc.createElementNS(SVG, 'path');
    path.setAttribute('d', span ? linePath(s.points, span[0], span[1], top, frame, gapMs) : '');
    path.setAttribute('stroke', shardColor(s.id));
    path.setAttribute('fill', 'none');
    path.setAttribute('stroke-width', '1.5');
    path.setAttribute('vector-effect', 'non-scaling-stroke');
    path.dataset.shard = String(s.id);
    svg.append(path);
  }
  const legend = doc.createElement('p');
  legend.className = 'legend';
  const minutes = span ? Math.max(1, Math.round((span[1] - span[0]) / 60_000)) : 0;
  legend.append(`0 to ${top}${unit}, the last ${minutes} min: `);
  for (const s of shown) {
    const key = doc.createElement('span');
    key.className = 'key';
    key.style.color = shardColor(s.id);
    key.textContent = `■ shard ${formatShardId(s.id)} `;
    legend.append(key);
  }
  figure.append(svg, legend);
}
