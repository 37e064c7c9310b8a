#!/usr/bin/env bash
# The compose stack for real: build, two workers, jobs on both, a worker container killed mid-job.
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
export TRANSQ_VISIBILITY_TIMEOUT=${TRANSQ_VISIBILITY_TIMEOUT:-30}
export TRANSQ_TASK_SOFT_TIME_LIMIT=${TRANSQ_TASK_SOFT_TIME_LIMIT:-20} TRANSQ_TASK_TIME_LIMIT=${TRANSQ_TASK_TIME_LIMIT:-25}
export TRANSQ_RATE_LIMIT=""
export TRANSQ_LOG_FORMAT=json
export REDIS_PASSWORD=${REDIS_PASSWORD:-smoke-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')}
export REDIS_PORT=${REDIS_PORT:-16379} CACHE_PORT=${CACHE_PORT:-16380} API_PORT=${API_PORT:-18080}
export WORKER_MEMORY=${WORKER_MEMORY:-1g} WORKER_CPUS=${WORKER_CPUS:-1}
unset WORKER_REPLICAS  # the compose file's default (2) is what a plain `up -d` must give
if [ -z "${COMPOSE:-}" ]; then
  if docker compose version >/dev/null 2>&1; then COMPOSE="docker compose"; else COMPOSE="docker-compose"; fi
fi
PROJECT=transq-smoke
API_SERVICE=${API_SERVICE:-api-host}
dc() { $COMPOSE --project-name "$PROJECT" -f docker-compose.yml -f docker-compose.host.yml "$@"; }
API="http://127.0.0.1:${API_PORT}"
step() { printf '\n== %s\n' "$*"; }
fail() { printf 'SMOKE FAILED: %s\n' "$*" >&2; dc logs --tail 50 >&2 || true; exit 1; }
cleanup() { step "tear down"; dc down --volumes --remove-orphans >/dev/null 2>&1 || true; }
trap cleanup EXIT

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
deadline=$((SECONDS + 300))
until curl -fsS "$API/readyz" 2>/dev/null | grep -q '"workers":2'; do
  [ $SECONDS -lt $deadline ] || fail "the stack did not become ready with two workers"
  sleep 2
done
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
  echo "$config" | grep -q '"max-size"' || fail "container $c has no log rotation"
done
for c in $(dc ps -q "$API_SERVICE") $(dc ps -q worker); do
  docker logs "$c" 2>&1 | python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin if l.strip()]' \
    || fail "container $c wrote a line that is not JSON"
done
for c in $(dc ps -q worker); do
  short=$(echo "$c" | cut -c1-12)
  docker logs "$c" 2>&1 | grep -q "transq-$short@.* ready" || fail "worker $c is not named after its container"
  echo "worker $short: $(docker logs "$c" 2>&1 | grep -o "transq-$short@[^ ]*" | head -1)"
done

step "each worker container sees its memory limit and runs as non-root"
for c in $(dc ps -q worker); do
  echo "$c: user $(docker exec "$c" id -un), $(docker logs "$c" 2>&1 | grep -o 'memory limit [0-9]* MiB ([a-z0-9]*)' | head -1)"
  [ "$(docker exec "$c" id -u)" != 0 ] || fail "worker runs as root"
done
api_c=$(dc ps -q "$API_SERVICE")
[ "$(docker exec "$api_c" id -u)" != 0 ] || fail "api runs as root"
docker exec "$api_c" python3 -c "import torch" 2>/dev/null && fail "the API image contains torch"
echo "api: user $(docker exec "$api_c" id -un), no torch"

step "a batch of jobs is shared by both workers"
ids=()
for i in $(seq 1 12); do ids+=("$(post_job "$(sentences 300 "批$i")")"); done
workers=()
for id in "${ids[@]}"; do
  [ "$(wait_final "$id" 300)" = succeeded ] || fail "job $id did not succeed"
done
took=$(for c in $(dc ps -q worker); do docker logs "$c" 2>&1 | grep -c '"message": "job [0-9a-f]* succeeded' || true; done)
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
running=$(dc ps -q worker | xargs docker inspect -f '{{.State.Running}}' | grep -c true)
[ "$running" -eq 2 ] || fail "up -d gave $running running workers, not 2"
echo "up -d: $running workers running"

step "SMOKE PASSED"
