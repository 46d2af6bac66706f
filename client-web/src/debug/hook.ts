// The shape of `window.__mino`, the end-to-end tests' window into the running
// client: stats, world <-> screen positions, and a way to exercise device-loss
// recovery. Types only, shared with the tests in e2e/; the hook itself is
// test-hook.ts, present in test builds only.

/** Everything the hook reports. Times are ms; ids are the wire's. */
export interface MinoStats {
  /** Frames drawn so far. */
  frames: number;
  fps: number;
  /** Mean / largest CPU time of the page's frame callback over the last 120 frames, ms. */
  frameCpuMs: number;
  frameCpuMsMax: number;
  /** Draw calls in the last frame (floor + bodies) and how many of them drew players (1). */
  drawCalls: number;
  bodyDrawCalls: number;
  /** Player instances drawn in the last frame. */
  instances: number;
  /** Instance buffer capacity (players) and GPU buffers created for it so far. */
  instanceCapacity: number;
  instanceAllocations: number;
  /** Interpolation delay of the local player's shard and its jitter estimate, ms. */
  interpDelayMs: number;
  jitterMs: number;
  /** Newest tick's server time minus the server time drawn, local player's shard, ms (about the delay). */
  renderLagMs: number;
  /** Render-time jumps so far (hidden tab, stalls, bursts). */
  renderSnaps: number;
  /**
   * Positions held for the player with the most (bounded whatever happens:
   * interp/player-tracks' SAMPLES), and the shards with a cell held.
   */
  bufferedSamples: number;
  shards: number;
  /** View frames that did not apply to what the page held, each a resync (a new socket). */
  resyncs: number;
  /**
   * Whether the Welcome granted datagram deltas (WebTransport: frames held
   * by the lossy rule), cells whose change was missed (a datagram lost),
   * and the Resync messages asked for them (the view whole again, on the
   * same session).
   */
  datagramDeltas: boolean;
  cellsMissed: number;
  resyncsAsked: number;
  /** The WebGPU adapter in use. */
  adapter: { architecture: string; vendor: string; description: string };
  /** Devices used so far (1 + recoveries from a lost device), and the last recovery time, ms. */
  deviceGeneration: number;
  lastRecoveryMs: number;
  /** Why WebGPU is unavailable (null when it works). */
  gpuFailure: string | null;
  /** The local player's id and shard (0 before Welcome). */
  ownPlayerId: number;
  shardId: number;
  /** Connection state kind. */
  connection: string;
  /** A reconnect is scheduled (false while live, and for good after a stop). */
  reconnectPending: boolean;
  /** Smoothed ping, ms. */
  pingMs: number;
  /**
   * The transport in use ('webtransport' or 'websocket'; '' before the
   * first dial ends) and why it is the websocket after WebTransport was
   * tried (net/transport.ts, `Fallback`; '' when it is not a fallback).
   */
  transport: string;
  fallback: string;
  /** View frames dropped because they came before this transport's Welcome (a datagram overtaking it). */
  earlyViews: number;
  /** Transports opened (websockets or WebTransport sessions), frames refused by the verifier, inputs sent. */
  sockets: number;
  decodeErrors: number;
  inputsSent: number;
  /** Whether the Welcome gave area of interest (else each shard is one cell). */
  aoi: boolean;
  /**
   * Area of interest: the view radius (world units), the camera's farthest
   * screen corner from its centre (world units), and how far the part of the
   * screen the panels leave free reaches from the followed player at its
   * nearest edge (world units: the whole view radius is on screen when this
   * is at least the radius).
   */
  viewRadius: number;
  cornerReach: number;
  freeReach: number;
  /** Players in view, the local one included: drawn in the last frame; with area of interest, within the view radius (as the HUD counts them). */
  inView: number;
  /** Players tracked (drawn, new or hidden after leaving their cell). */
  tracked: number;
  /** Area of interest: the place's players and live shards from the last PlaceStatus (NaN before one). */
  placePlayers: number;
  placeShards: number;
  /**
   * View frames received (one a tick with anything new), and the cells they
   * changed that were taken, and refused as repeated or older.
   */
  viewFrames: number;
  cellFrames: number;
  staleCellFrames: number;
  /** Area of interest: NamesRequests sent, ids asked in them, names known. */
  namesRequests: number;
  namesAsked: number;
  namesKnown: number;
  /** Area of interest: dots on the minimap at its last redraw. */
  minimapDots: number;
  /**
   * Prediction of the own player: authoritative samples compared with it,
   * the prediction error (how far each moved the prediction, world units)
   * at the median, the 95th percentile and the largest of the last 512, and
   * the corrections that snapped rather than faded.
   */
  predictionSamples: number;
  predictionErrorP50: number;
  predictionErrorP95: number;
  predictionErrorMax: number;
  predictionSnaps: number;
  /** Cells changed by view frames applied but not taken, to catch up (the page fell behind the network), and the most frames found waiting at one animation frame. */
  framesSkipped: number;
  framesMostWaiting: number;
  /** Where the camera keeps the own player across, CSS pixels from the canvas's left (the middle of what the panels leave free). */
  focusX: number;
  /** Half the size of the own body with its ring on screen, CSS pixels. */
  ownBodyPx: number;
}

/** The object installed as `window.__mino`. */
export interface MinoHook {
  /** A fresh copy of the stats at the time of reading. */
  readonly stats: MinoStats;
  /** CSS pixel position in the page of world point (x, y) as the camera shows it now, or null before the first frame. */
  worldToScreen(x: number, y: number): [number, number] | null;
  /** The world point (world units) under CSS pixel (x, y) of the page as the camera shows it now, or null before the first frame. */
  screenToWorld(x: number, y: number): [number, number] | null;
  /** The animation frame time (ms, `requestAnimationFrame`'s clock) of the last frame drawn, or null before one: what `drawnPosition` is as of. */
  drawnAtMs(): number | null;
  /** Position at which player `id` was drawn in the last frame, world units, or null. */
  drawnPosition(id: number): [number, number] | null;
  /** The ids drawn in the last frame. */
  drawnIds(): number[];
  /** The name the page knows for player `id` (roster or name book), or null. */
  nameOf(id: number): string | null;
  /** Whole-shard mode: how many players shard `shard` announced as left so far (applied to the roster). */
  leftsFrom(shard: number): number;
  /** Destroys the WebGPU device as a driver reset would; the page must recover. */
  loseDevice(): void;
  /** Forgets the prediction error statistics (before a measurement). */
  resetPredictionStats(): void;
  /** Sends a Resync as a page that missed a change does (the view whole again, on the same transport); whether it was sent. */
  askResync(): boolean;
}

declare global {
  interface Window {
    __mino?: MinoHook;
  }
}
