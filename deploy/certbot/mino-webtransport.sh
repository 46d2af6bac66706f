#!/bin/sh
# certbot deploy hook: gives this machine's shards a copy of the game's
# certificate that they may read, and restarts them one at a time to take it
# (deploy/README.md, "TLS certificates", "The shards' WebTransport listener").
#
# Install it as root, and put this machine's settings (below: LINEAGE,
# SHARDS, DEST, ...) in /etc/mino/webtransport-hook.env, which a new copy of
# the hook leaves alone, e.g.:
#   install -m 0755 deploy/certbot/mino-webtransport.sh \
#     /etc/letsencrypt/renewal-hooks/deploy/mino-webtransport
#   printf '%s\n' 'LINEAGE=/etc/letsencrypt/live/play.example.com' \
#     'SHARDS="1=127.0.0.1:9101 2=127.0.0.1:9102"' >/etc/mino/webtransport-hook.env
#
# certbot runs every hook of renewal-hooks/deploy/ after every renewal on the
# machine, with RENEWED_LINEAGE the renewed certificate's live/ folder: this
# one does nothing unless that is the game's. Each renewal's copy goes into
# a folder of its own under DEST, and DEST/current, a symbolic link the
# shards' files are named through, is switched to it in one rename (a shard
# starting meanwhile reads its certificate again after its key, and the pair
# again if it changed: server/src/webtransport/certificate.rs). The copy
# before stays (a shard that resolved the link just before
# the switch still finds it); older ones are removed. A shard reads the
# files only at its start, so the hook then restarts this machine's running
# shards one at a time, each once the one before answers /readyz on its
# admin listener (a restart drains its players to the others first). A
# shard not ready within MINO_READY_TIMEOUT_S stops the hook there, the rest
# left as they are; certbot logs the failure.
#
# The settings file is read last; the defaults below also come from the
# environment (MINO_*: a run by hand, or tests).

# The game's certificate: any other renewal on this machine is none of this hook's business.
LINEAGE="${MINO_LINEAGE:-/etc/letsencrypt/live/play.example.com}"
# This machine's shards, N=its admin listener (MINO_ADMIN_LISTEN); empty: restart them yourself.
SHARDS="${MINO_SHARDS-1=127.0.0.1:9101 2=127.0.0.1:9102}"
# Where the copies go (MINO_WEBTRANSPORT_CERT=$DEST/current/fullchain.pem,
# MINO_WEBTRANSPORT_KEY=$DEST/current/privkey.pem in each shard's env file).
DEST="${MINO_CERT_DEST:-/etc/mino/tls/webtransport}"
# Owner and group of the copies (the shards run as group mino), and how long
# a restarted shard may take to be ready, seconds.
OWNER="${MINO_CERT_OWNER:-root}"
GROUP="${MINO_CERT_GROUP:-mino}"
READY_TIMEOUT_S="${MINO_READY_TIMEOUT_S:-120}"
SETTINGS="${MINO_HOOK_SETTINGS:-/etc/mino/webtransport-hook.env}"
# shellcheck disable=SC1090
[ ! -r "$SETTINGS" ] || . "$SETTINGS"

[ "${RENEWED_LINEAGE:-}" = "$LINEAGE" ] || exit 0
set -eu
# The restarts wait on each shard's /readyz with curl (apt install curl).
[ -z "$SHARDS" ] || command -v curl >/dev/null || { echo "mino-webtransport: no curl to wait on the shards" >&2; exit 1; }

stamp="$(date -u +%Y%m%dT%H%M%SZ).$$"
install -d -m 0750 -o "$OWNER" -g "$GROUP" "$DEST"
# The copy the shards are named to now (none on a first run).
before="$(readlink "$DEST/current" || true)"
# A copy left half made (a file missing, a full disk) is removed, and the
# shards keep the one they have.
trap 'rm -rf "${DEST:?}/$stamp"' EXIT
install -d -m 0750 -o "$OWNER" -g "$GROUP" "$DEST/$stamp"
install -m 0644 -o "$OWNER" -g "$GROUP" "$LINEAGE/fullchain.pem" "$DEST/$stamp/fullchain.pem"
install -m 0640 -o "$OWNER" -g "$GROUP" "$LINEAGE/privkey.pem" "$DEST/$stamp/privkey.pem"
# The switch: a new link, renamed over the old one (rename is atomic).
ln -sfn "$stamp" "$DEST/current.new"
mv -fT "$DEST/current.new" "$DEST/current"
trap - EXIT
# The copies of earlier renewals but the one just left (a shard that
# resolved the link before the switch may still be reading it): only folders
# this hook made, by their names.
find "$DEST" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*T*Z.*' ! -name "$stamp" ! -name "${before:-$stamp}" \
  -exec rm -rf {} +
# Files of the layout before the link (DEST/fullchain.pem itself) are no
# longer renewed: a shard still named to them would restart on an old
# certificate.
if [ -f "$DEST/fullchain.pem" ] || [ -f "$DEST/privkey.pem" ]; then
  echo "mino-webtransport: $DEST/fullchain.pem and privkey.pem are no longer renewed: name $DEST/current/fullchain.pem and current/privkey.pem in the shards' env files (MINO_WEBTRANSPORT_CERT, MINO_WEBTRANSPORT_KEY), then remove them" >&2
fi

for s in $SHARDS; do
  n=${s%%=*} admin=${s#*=}
  systemctl is-active --quiet "mino-server@$n" || continue   # stopped: it reads the new files when started
  systemctl restart "mino-server@$n"
  i=0
  until curl -fsS --max-time 2 -o /dev/null "http://$admin/readyz"; do
    i=$((i + 1))
    [ "$i" -lt "$READY_TIMEOUT_S" ] || { echo "mino-webtransport: mino-server@$n not ready after $READY_TIMEOUT_S s; stopping" >&2; exit 1; }
    sleep 1
  done
done
