#!/usr/bin/env bash
# The soak test (not run in CI): worker JVMs contend for locks on DynamoDB Local while random
# workers are killed (SIGKILL) and stopped (SIGSTOP past their lease); at the end it checks the
# whole history and prints totals (critical sections, kills, pauses, violations, longest wait,
# entries left). Exits non-zero on any violation or leftover queue entry.
#
#   scripts/soak.sh [DURATION] [workers=4] [entities=3] [leaseMs=2000] [heartbeatMs=500] [seed=N] [wakeUp=off|plain|authenticated]
#   (wakeUp also from DYNAMOLOCK_SOAK_WAKE_UP; default off)
#   DURATION: 90s, 10m, 1h or PT10M (default 10m)
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10m}"
shift || true
mvn -B -ntp -q -pl dynamolock-core -am test-compile
mvn -B -ntp -q -pl dynamolock-core dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile="$PWD/dynamolock-core/target/soak.classpath"
cd dynamolock-core
exec java -Xmx512m -cp "target/test-classes:target/classes:$(cat target/soak.classpath)" \
    io.dynamolock.core.reliability.SoakMain "$duration" "$@"
