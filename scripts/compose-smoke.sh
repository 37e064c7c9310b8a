#!/usr/bin/env bash
# The compose stack for real: build, every service up and healthy (the API, both Redis servers, the
# document stage, the workers and the callback deliverer), each doing its job (a document translated, a
# signed callback delivered to a receiver this script runs), jobs on both workers, a worker container
# killed mid-job.
#
#   scripts/compose-smoke.sh            (uses docker-compose.yml + docker-compose.host.yml)
#
# Environment: BASE_IMAGE and REDIS_IMAGE (local images where no registry is reachable),
# BAKE_MODEL (default test-model: the offline tiny model), TORCH_WHEELS (a folder with the torch
# CPU wheel, default docker/wheels: when it holds one, it becomes the WHEELS_IMAGE the worker installs
# torch from), COMPOSE (default: docker compose, else docker-compose).
# Traffic goes to 127.0.0.1 only. Not part of CI: it needs a Docker engine.
set -euo pipefail
cd "$(dirname "$0")/.."

export BAKE_MODEL=${BAKE_MODEL:-test-model}
export TRANSQ_MODEL=${TRANSQ_MODEL:-/opt/model}
export SECOND_MODEL=${SECOND_MODEL:-/opt/model-en-zh}  # the en-zh profile's worker: the baked en-zh test model
export TRANSQ_VISIBILITY_TIMEOUT=${TRANSQ_VISIBILITY_TIMEOUT:-30}
export TRANSQ_TASK_SOFT_TIME_LIMIT=${TRANSQ_TASK_SOFT_TIME_LIMIT:-20} TRANSQ_TASK_TIME_LIMIT=${TRANSQ_TASK_TIME_LIMIT:-25}
export TRANSQ_RATE_LIMIT=""
export TRANSQ_LOG_FORMAT=json
export REDIS_PASSWORD=${REDIS_PASSWORD:-smoke-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')}
export REDIS_PORT=${REDIS_PORT:-16379} CACHE_PORT=${CACHE_PORT:-16380} API_PORT=${API_PORT:-18080}
export WORKER_MEMORY=${WORKER_MEMORY:-1g} WORKER_CPUS=${WORKER_CPUS:-1}
unset WORKER_REPLICAS  # the compose file's default (2) is what a plain `up -d` must give
# Callbacks on, to a receiver this script runs on the host's loopback (the stack uses host networking):
# plain http and a loopback address allowed for that receiver's host:port only, not for the host's other
# ports (Redis's among them).
export CALLBACK_PORT=${CALLBACK_PORT:-18090}
export TRANSQ_CALLBACK_SECRET=${TRANSQ_CALLBACK_SECRET:-smoke-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')}
export TRANSQ_CALLBACK_ALLOW_HTTP_HOSTS=127.0.0.1:$CALLBACK_PORT TRANSQ_CALLBACK_ALLOW_PRIVATE_HOSTS=127.0.0.1:$CALLBACK_PORT
if [ -z "${COMPOSE:-}" ]; then
  if docker compose version >/dev/null 2>&1; then COMPOSE="docker compose"; else COMPOSE="docker-compose"; fi
fi
PROJECT=transq-smoke
API_SERVICE=${API_SERVICE:-api-host}
dc() { $COMPOSE --project-name "$PROJECT" -f docker-compose.yml -f docker-compose.host.yml "$@"; }
API="http://127.0.0.1:${API_PORT}"
step() { printf '\n== %s\n' "$*"; }
# Every check reads a whole output into a variable first, then searches it: under `set -o pipefail`,
# `docker logs c | grep -q x` fails when grep stops at its first match and `docker logs` then dies of
# SIGPIPE (seen 13 times in 100 with Docker 28), although the line is there.
has() { grep -q -e "$2" <<<"$1"; }  # $1: text, $2: pattern
logs() { docker logs "$1" 2>&1; }
fail() { printf 'SMOKE FAILED: %s\n' "$*" >&2; dc logs --tail 50 >&2 || true; exit 1; }
cleanup() { step "tear down"; COMPOSE_PROFILES=en-zh dc down --volumes --remove-orphans >/dev/null 2>&1 || true; }
smoke_tmp=$(mktemp -d)
receiver_pid=""
trap 'cleanup; [ -z "$receiver_pid" ] || kill "$receiver_pid" 2>/dev/null; rm -rf "$smoke_tmp"' EXIT

post_job() {  # $1: JSON body -> job id
  curl -fsS -X POST "$API/v1/jobs" -H 'Content-Type: application/json' -d "$1" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}
job_field() {  # $1: id, $2: python expression on the job `j`
  curl -fsS "$API/v1/jobs/$1" | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"
}
wait_final() {  # $1: id, $2: seconds
  local deadline=$((SECONDS + $2)) status
  while [ $SECONDS -lt $deadline ]; do
    status=$(job_field "$1" 'j["status"]')
    case "$status" in succeeded|failed|cancelled) echo "$status"; return 0 ;; esac
    sleep 1
  done
  echo timeout
}
wait_readyz() {  # $1: what /readyz must say, $2: the failure otherwise (within 300 s)
  local deadline=$((SECONDS + 300))
  until has "$(curl -fsS "$API/readyz" 2>/dev/null || true)" "$1"; do
    [ $SECONDS -lt $deadline ] || fail "$2"
    sleep 2
  done
}
sentences() {  # $1: how many distinct sentences, $2: tag
  python3 -c "import json,sys; n,t=int(sys.argv[1]),sys.argv[2]; print(json.dumps({'text': ''.join(f'{t}第{i}句话。' for i in range(n))}, ensure_ascii=False))" "$1" "$2"
}

step "build images"
TORCH_WHEELS=${TORCH_WHEELS:-docker/wheels}
if ls "$TORCH_WHEELS"/torch-*.whl >/dev/null 2>&1; then
  docker build -q -f docker/wheels.Dockerfile -t transq-torch-wheels --build-arg BASE_IMAGE="${BASE_IMAGE:-python:3.11-slim}" "$TORCH_WHEELS"
  export WHEELS_IMAGE=transq-torch-wheels
fi
dc build

step "up -d with no --scale: WORKER_REPLICAS (2) workers"
dc up -d
wait_readyz '"workers":2' "the stack did not become ready with two workers"
curl -fsS "$API/readyz"; echo
dc ps

step "healthchecks: the API on /healthz, each worker once its model is loaded"
deadline=$((SECONDS + 120))
for c in $(dc ps -q "$API_SERVICE") $(dc ps -q worker); do
  until [ "$(docker inspect -f '{{.State.Health.Status}}' "$c")" = healthy ]; do
    [ $SECONDS -lt $deadline ] || fail "container $c never became healthy"
    sleep 2
  done
  echo "$(docker inspect -f '{{.Name}}' "$c"): healthy"
done

step "every service's log is rotated; with JSON logs every line is JSON; worker names carry their container id"
for c in $(dc ps -q); do
  config=$(docker inspect -f '{{json .HostConfig.LogConfig}}' "$c")
  echo "$(docker inspect -f '{{.Name}}' "$c"): $config"
  has "$config" '"max-size"' || fail "container $c has no log rotation"
done
for c in $(dc ps -q "$API_SERVICE") $(dc ps -q worker) $(dc ps -q document); do
  python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin if l.strip()]' <<<"$(logs "$c")" \
    || fail "container $c wrote a line that is not JSON"
done
for c in $(dc ps -q worker); do
  short=$(echo "$c" | cut -c1-12)
  log=$(logs "$c")
  has "$log" "transq-$short@.* ready" || fail "worker $c is not named after its container"
  name=$(grep -o -e "transq-$short@[^ ]*" <<<"$log" || true)
  echo "worker $short: ${name%%$'\n'*}"
done

step "each worker container sees its memory limit and runs as non-root"
for c in $(dc ps -q worker); do
  limit=$(grep -o -e 'memory limit [0-9]* MiB ([a-z0-9]*)' <<<"$(logs "$c")" || true)
  echo "$c: user $(docker exec "$c" id -un), ${limit%%$'\n'*}"
  [ "$(docker exec "$c" id -u)" != 0 ] || fail "worker runs as root"
done
api_c=$(dc ps -q "$API_SERVICE")
[ "$(docker exec "$api_c" id -u)" != 0 ] || fail "api runs as root"
docker exec "$api_c" python3 -c "import torch" 2>/dev/null && fail "the API image contains torch"
echo "api: user $(docker exec "$api_c" id -un), no torch"

step "every service of the compose file runs, none restarting, each healthy where it has a healthcheck"
for svc in $(dc config --services); do
  containers=$(dc ps -q "$svc")
  [ "$svc" = worker-en-zh ] && continue  # behind the en-zh profile: started and checked below
  [ -n "$containers" ] || fail "service $svc has no container"
  for c in $containers; do
    deadline=$((SECONDS + 180))
    while :; do
      state=$(docker inspect -f '{{.State.Status}} {{.RestartCount}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$c")
      read -r status restarts health <<<"$state"
      [ "$restarts" = 0 ] || fail "service $svc restarted $restarts time(s): $(logs "$c" | tail -20)"
      [ "$status" = running ] || fail "service $svc is $status: $(logs "$c" | tail -20)"
      [ "$health" = healthy ] || [ "$health" = none ] && break
      [ $SECONDS -lt $deadline ] || fail "service $svc is $health after 180 s: $(logs "$c" | tail -20)"
      sleep 2
    done
    echo "$svc $(docker inspect -f '{{.Name}}' "$c"): $status, restarts $restarts, health $health"
  done
done

step "the callback deliverer posts a finished job's view, signed, to its callback_url"
cat >"$smoke_tmp/receiver.py" <<'PY'
import hashlib, hmac, http.server, json, os, sys, time
SECRET, URL = os.environ["TRANSQ_CALLBACK_SECRET"].encode(), sys.argv[3]
def verify(headers, body, my_url, my_key_id=""):  # docs/api.md's check; no API keys here: no owner
    timestamp = headers.get("X-Transq-Timestamp", "")
    signed = f"{timestamp}\n{my_key_id}\n{my_url}\n".encode() + body
    expected = "sha256=" + hmac.new(SECRET, signed, hashlib.sha256).hexdigest()
    fresh = timestamp.isdigit() and abs(time.time() - int(timestamp)) <= 300
    return fresh and hmac.compare_digest(expected, headers.get("X-Transq-Signature", ""))
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(sys.argv[2], "a") as out:
            out.write(json.dumps({"verified": verify(self.headers, body, URL), "body": body.decode()}) + "\n")
        self.send_response(204)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver).serve_forever()
PY
callback_url="http://127.0.0.1:$CALLBACK_PORT/done"
python3 "$smoke_tmp/receiver.py" "$CALLBACK_PORT" "$smoke_tmp/callbacks.jsonl" "$callback_url" &
receiver_pid=$!
id=$(post_job "{\"text\": \"回调测试。\", \"callback_url\": \"$callback_url\"}")
[ "$(wait_final "$id" 120)" = succeeded ] || fail "the callback job $id did not succeed"
deadline=$((SECONDS + 60))
until has "$(cat "$smoke_tmp/callbacks.jsonl" 2>/dev/null || true)" "$id"; do
  [ $SECONDS -lt $deadline ] || fail "no callback for job $id reached the receiver: $(curl -sS "$API/v1/jobs/$id")"
  sleep 1
done
delivery=$(grep -e "$id" "$smoke_tmp/callbacks.jsonl" | head -1)
has "$delivery" '"verified": true' || fail "the callback for job $id does not verify (secret, URL, owner): $delivery"
echo "callback for job $id delivered, its signature verified: $(job_field "$id" 'j["callback"]["state"]')"
redis_url="http://127.0.0.1:$REDIS_PORT/"
refused=$(curl -sS -X POST "$API/v1/jobs" -H 'Content-Type: application/json' \
  -d "{\"text\": \"回调测试。\", \"callback_url\": \"$redis_url\"}")
has "$refused" 'is not one' || fail "a callback_url to the broker's port of the allowed host was not refused: $refused"
echo "a callback_url to 127.0.0.1:$REDIS_PORT (the broker) refused: the allow list names 127.0.0.1:$CALLBACK_PORT only"

step "both Redis servers require REDIS_PASSWORD"
for svc_port in "redis $REDIS_PORT" "cache $CACHE_PORT"; do
  read -r svc port <<<"$svc_port"
  c=$(dc ps -q "$svc")
  anon=$(docker exec "$c" redis-cli -h 127.0.0.1 -p "$port" ping 2>&1 || true)
  authed=$(docker exec -e REDISCLI_AUTH="$REDIS_PASSWORD" "$c" redis-cli -h 127.0.0.1 -p "$port" ping 2>&1 || true)
  has "$anon" 'NOAUTH' || fail "$svc answers without the password: $anon"
  has "$authed" 'PONG' || fail "$svc refuses the password: $authed"
  echo "$svc: without the password: $anon; with it: $authed"
done

step "the document service: healthy, parses an uploaded Markdown file and renders its translation"
doc_c=$(dc ps -q document)
[ -n "$doc_c" ] || fail "no document container"
deadline=$((SECONDS + 120))
until [ "$(docker inspect -f '{{.State.Health.Status}}' "$doc_c")" = healthy ]; do
  [ $SECONDS -lt $deadline ] || fail "the document container never became healthy"
  sleep 2
done
[ "$(docker exec "$doc_c" id -u)" != 0 ] || fail "the document stage runs as root"
printf '# 标题\n\n第一段文字。\n\n- 列表项目。\n' >"$smoke_tmp/report.md"
id=$(curl -fsS -F "file=@$smoke_tmp/report.md" "$API/v1/documents" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
[ "$(wait_final "$id" 120)" = succeeded ] || fail "the document job $id did not succeed: $(curl -sS "$API/v1/jobs/$id")"
rendered=$(curl -fsS -D "$smoke_tmp/headers" "$API/v1/jobs/$id/document")
has "$(cat "$smoke_tmp/headers")" 'report\.en\.md' || fail "the document's download is not named report.en.md"
has "$rendered" '^# ' || fail "the rendered document lost its heading: $rendered"
has "$rendered" '^- ' || fail "the rendered document lost its list: $rendered"
echo "document job $id: succeeded, report.en.md ($(wc -c <<<"$rendered") bytes)"

step "a batch of jobs is shared by both workers"
ids=()
for i in $(seq 1 12); do ids+=("$(post_job "$(sentences 300 "批$i")")"); done
workers=()
for id in "${ids[@]}"; do
  [ "$(wait_final "$id" 300)" = succeeded ] || fail "job $id did not succeed"
done
took=$(for c in $(dc ps -q worker); do grep -c -e '"message": "job [0-9a-f]* succeeded' <<<"$(logs "$c")" || true; done)
echo "jobs finished per worker container: $(echo $took)"
busy=$(for n in $took; do [ "$n" -gt 0 ] && echo x; done | wc -l)
[ "$busy" -eq 2 ] || fail "only $busy worker(s) took jobs"

step "kill the worker container running a job; the job still succeeds"
id=$(post_job "$(sentences 6000 "杀")")
for _ in $(seq 1 60); do [ "$(job_field "$id" 'j["status"]')" = running ] && break; sleep 0.5; done
sleep 1
victim=""
for c in $(dc ps -q worker); do
  wid=$(docker exec "$c" cat /tmp/transq-worker-id 2>/dev/null || true)
  owner=$(docker exec -e REDISCLI_AUTH="$REDIS_PASSWORD" "$(dc ps -q redis)" redis-cli -h 127.0.0.1 -p "$REDIS_PORT" hget "transq:job:$id" worker)
  [ -n "$wid" ] && [ "$wid" = "$owner" ] && victim=$c
done
[ -n "$victim" ] || fail "could not tell which worker runs job $id"
echo "job $id runs on $victim: docker kill"
docker kill "$victim" >/dev/null
status=$(wait_final "$id" 400)
echo "job $id after the kill: $status (attempts: $(docker exec -e REDISCLI_AUTH="$REDIS_PASSWORD" "$(dc ps -q redis)" redis-cli -h 127.0.0.1 -p "$REDIS_PORT" hget "transq:job:$id" attempts))"
[ "$status" = succeeded ] || fail "the job did not survive its worker's death"

step "a killed container stays down under unless-stopped; up -d brings the replicas back"
[ "$(docker inspect -f '{{.State.Running}} {{.RestartCount}}' "$victim")" = "false 0" ] \
  || fail "docker kill was followed by a restart"
echo "after docker kill: running=false, restarts=0"
dc up -d
running=$(dc ps -q worker | xargs docker inspect -f '{{.State.Running}}' | grep -c true || true)  # grep -c: 1 on none
[ "$running" -eq 2 ] || fail "up -d gave $running running workers, not 2"
echo "up -d: $running workers running"

step "the en-zh profile starts offline; a request naming no language goes to TRANSQ_DEFAULT_PAIR"
COMPOSE_PROFILES=en-zh dc up -d worker-en-zh
wait_readyz '"en-zh":1' "the en-zh worker did not become ready"
curl -fsS "$API/readyz"; echo
id=$(post_job '{"text": "The second pair works offline.", "source_lang": "en", "target_lang": "zh"}')
[ "$(wait_final "$id" 120)" = succeeded ] || fail "the en-zh job $id did not succeed"
answer=$(curl -sS -X POST "$API/api/translate" -H 'Content-Type: application/json' -d '{"text": "你好。"}')
echo "POST /api/translate {\"text\": \"你好。\"} with two pairs served: $answer"
has "$answer" '"translation"' || fail "the call naming no language was refused with two pairs served"

step "SMOKE PASSED"
