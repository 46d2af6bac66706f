// The browsers with WebGPU are named once in the page (its "no WebGPU"
// message), and the README and scripts/play.sh must name the same ones.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WEBGPU_BROWSERS, failureMessage } from '../src/render/gpu.js';

const root = resolve(__dirname, '../..');

describe('the browsers named', () => {
  it('are the same in the page, the README and scripts/play.sh', () => {
    expect(failureMessage('no-webgpu', 'x')).toContain(WEBGPU_BROWSERS);
    expect(readFileSync(resolve(root, 'README.md'), 'utf8')).toContain(`(${WEBGPU_BROWSERS})`);
    expect(readFileSync(resolve(root, 'scripts/play.sh'), 'utf8')).toContain(`BROWSERS="${WEBGPU_BROWSERS}"`);
  });
});
