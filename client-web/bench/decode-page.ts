// The page the browser decode benchmark runs in: bench/decode-core.ts's cases,
// timed with the page's clock, called by bench/decode-browser.ts.
import { runDecodeBench } from './decode-core.js';

(window as unknown as { __bench: (rounds: number) => unknown }).__bench = (rounds) => runDecodeBench(rounds, () => performance.now() * 1000);
