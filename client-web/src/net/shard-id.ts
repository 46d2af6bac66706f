// A shard id as people read it: 8 lowercase hex digits ("0000002a"), the form
// the server writes everywhere (its logs, `ShardId`'s Display, `--shard-id`),
// so the page's HUD, the admin console and the logs name a shard alike.

/** `id` (a u32 from the wire) as 8 lowercase hex digits; "–" for 0 (none yet) or a value that is not one. */
export function formatShardId(id: number): string {
  if (!Number.isInteger(id) || id <= 0 || id > 0xffff_ffff) return '–';
  return id.toString(16).padStart(8, '0');
}
