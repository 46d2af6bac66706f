// Reading a page screenshot's pixels (PNG via pngjs) to prove what was drawn.

import { PNG } from 'pngjs';

/** An RGB colour, 0-255 per channel. */
export type Rgb = readonly [number, number, number];

/** The own player's body colour as bodies.wgsl draws it (sRGB, 0-255); others have their own hue (src/render/hue.ts). */
export const OWN_BODY: Rgb = [64, 209, 255];

/** A decoded screenshot. */
export class Screenshot {
  private readonly png: PNG;

  constructor(bytes: Buffer) {
    this.png = PNG.sync.read(bytes);
  }

  get width(): number {
    return this.png.width;
  }

  get height(): number {
    return this.png.height;
  }

  /** The pixel at (x, y) (rounded, clamped to the image). */
  at(x: number, y: number): Rgb {
    const px = Math.min(this.png.width - 1, Math.max(0, Math.round(x)));
    const py = Math.min(this.png.height - 1, Math.max(0, Math.round(y)));
    const i = (py * this.png.width + px) * 4;
    const d = this.png.data;
    return [d[i] ?? 0, d[i + 1] ?? 0, d[i + 2] ?? 0];
  }

  /** Whether some pixel within `radius` of (x, y) is within `tolerance` of `color` per channel. */
  near(x: number, y: number, color: Rgb, radius = 2, tolerance = 40): boolean {
    for (let dy = -radius; dy <= radius; dy++) {
      for (let dx = -radius; dx <= radius; dx++) if (close(this.at(x + dx, y + dy), color, tolerance)) return true;
    }
    return false;
  }

  /** Number of 4-connected regions of pixels within `tolerance` of `color` with at least `minPixels` pixels. */
  blobs(color: Rgb, tolerance = 40, minPixels = 6): number {
    const { width, height } = this.png;
    const seen = new Uint8Array(width * height);
    let count = 0;
    const stack: number[] = [];
    for (let start = 0; start < width * height; start++) {
      if (seen[start] || !close(this.at(start % width, Math.floor(start / width)), color, tolerance)) continue;
      let size = 0;
      stack.push(start);
      seen[start] = 1;
      while (stack.length) {
        const p = stack.pop() as number;
        size++;
        const x = p % width;
        const y = Math.floor(p / width);
        for (const [nx, ny] of [
          [x + 1, y],
          [x - 1, y],
          [x, y + 1],
          [x, y - 1],
        ] as const) {
          if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
          const q = ny * width + nx;
          if (!seen[q] && close(this.at(nx, ny), color, tolerance)) {
            seen[q] = 1;
            stack.push(q);
          }
        }
      }
      if (size >= minPixels) count++;
    }
    return count;
  }
}

function close(a: Rgb, b: Rgb, tolerance: number): boolean {
  return Math.abs(a[0] - b[0]) <= tolerance && Math.abs(a[1] - b[1]) <= tolerance && Math.abs(a[2] - b[2]) <= tolerance;
}
