// The walking game of mino's scale runner on Colyseus: one room, every
// player in it; the state a MapSchema of players (x, y, heading as float32,
// Colyseus's own schema); players walk at 120 world units a second in a
// 1,000-unit square world, towards the heading their client last sent
// (mino's defaults: --speed 120, --world-size 1000); the simulation steps at
// 20 Hz and patches go out at Colyseus's default patch rate, 20 Hz (50 ms),
// over its usual websocket transport (@colyseus/ws-transport).
//
// usage: node server.js [--port PORT] [--host 127.0.0.1]
// Prints "colyseus listening on ws://HOST:PORT" once it listens (port 0:
// the port it got); stops on SIGTERM or SIGINT.

import { defineRoom, defineServer, Room } from "@colyseus/core";
import { WebSocketTransport } from "@colyseus/ws-transport";
import { schema, t } from "@colyseus/schema";
import { parseArgs } from "node:util";

/** mino's defaults: the world's side, world units; the walking speed, units a second. */
const WORLD = 1000;
const SPEED = 120;
/** Simulation step, ms (20 Hz, as mino's ticks). */
const STEP_MS = 50;

const Player = schema({ x: t.float32(), y: t.float32(), heading: t.float32() }, "Player");
const WalkState = schema({ players: t.map(Player) }, "WalkState");

class WalkRoom extends Room {
  maxClients = 100_000;
  state = new WalkState();

  onCreate() {
    // A client's walking direction, radians: its input, as mino's Input.
    this.onMessage("heading", (client, heading) => {
      const p = this.state.players.get(client.sessionId);
      if (p && typeof heading === "number" && Number.isFinite(heading)) p.heading = heading;
    });
    this.setSimulationInterval((dt) => this.step(dt / 1000), STEP_MS);
  }

  /** Moves every player `dt` seconds along its heading, clamped to the world. */
  step(dt) {
    this.state.players.forEach((p) => {
      p.x = Math.min(WORLD, Math.max(0, p.x + Math.cos(p.heading) * SPEED * dt));
      p.y = Math.min(WORLD, Math.max(0, p.y + Math.sin(p.heading) * SPEED * dt));
    });
  }

  onJoin(client) {
    const p = new Player();
    p.x = Math.random() * WORLD;
    p.y = Math.random() * WORLD;
    p.heading = Math.random() * 2 * Math.PI;
    this.state.players.set(client.sessionId, p);
  }

  onLeave(client) {
    this.state.players.delete(client.sessionId);
  }
}

const { values } = parseArgs({ options: { port: { type: "string", default: "0" }, host: { type: "string", default: "127.0.0.1" } } });
const transport = new WebSocketTransport({ maxPayload: 4 * 1024 });
const server = defineServer({ rooms: { walk: defineRoom(WalkRoom) }, transport, greet: false });
await server.listen(Number(values.port), values.host);
const address = transport.server?.address?.() ?? { port: values.port };
console.log(`colyseus listening on ws://${values.host}:${address.port}`);
const stop = async () => {
  await server.gracefullyShutdown(false).catch(() => {});
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
