#!/bin/sh
# Runs the example sweep on the current kubectl context: shards, then merge
# and report, then copies the merged output here. Re-running it after a
# failure resumes: finished runs in /shared/out/shard-* are kept.
set -eu
cd "$(dirname "$0")"
kubectl apply -f pvc.yaml
kubectl delete job cclab-sweep cclab-merge --ignore-not-found
kubectl apply -f sweep-job.yaml
kubectl wait --for=condition=complete --timeout=24h job/cclab-sweep
kubectl apply -f merge-job.yaml
kubectl wait --for=condition=complete --timeout=1h job/cclab-merge
kubectl logs job/cclab-merge -c merge
# Copy the results out through a short-lived pod that mounts the volume.
kubectl run cclab-fetch --restart=Never --image=busybox:1.36 \
  --overrides='{"spec":{"containers":[{"name":"fetch","image":"busybox:1.36","command":["sleep","600"],"volumeMounts":[{"name":"shared","mountPath":"/shared"}]}],"volumes":[{"name":"shared","persistentVolumeClaim":{"claimName":"cclab-shared"}}]}}'
kubectl wait --for=condition=ready pod/cclab-fetch
kubectl cp cclab-fetch:/shared/out/merged ./merged
kubectl delete pod cclab-fetch
echo "results in $(pwd)/merged (open merged/report.html)"
