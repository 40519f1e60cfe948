# Shared by the scripts/bench-*.sh that drive a running ecsd with ecsctl; sourced, not run.

# wait_for_ecsd ECSCTL PORT: until ecsd answers a ping (5 s at most).
wait_for_ecsd() {
  for _ in $(seq 100); do
    "$1" -p "$2" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "$(basename "$0"): no ecsd answers on port $2" >&2
  return 1
}

# spawn_movers ECSCTL PORT COUNT COMPONENTS: defines the prefab `mover` with COMPONENTS (a JSON
# object) and spawns COUNT of it in the default world, 100,000 per world.spawn_prefab call.
spawn_movers() {
  local ecsctl=$1 port=$2 left=$3 n
  "$ecsctl" -p "$port" -t 60 call world.define_prefab "{\"name\":\"mover\",\"components\":$4}" >/dev/null
  while [[ $left -gt 0 ]]; do
    n=$((left > 100000 ? 100000 : left))
    "$ecsctl" -p "$port" -t 60 call world.spawn_prefab "{\"name\":\"mover\",\"count\":$n}" >/dev/null
    left=$((left - n))
  done
}
