# report.jq: ONE pass over `kubectl get pods --all-namespaces -o json`.
#
# Input:     the snapshot (a List or PodList with an `items` array).
# Variables: $excluded_namespaces  comma-separated namespace names, exact match.
# Output:    one report object: counts, the unscheduled and failed pods,
#            the per-node distribution and the verdict.
#
# Portable subset: runs unchanged on jq 1.6, jq 1.7/1.8 and jaq 3.x
# (see checker/src/lint.rs for the constructs we refuse).

# A pod counts as bound when spec.nodeName is a non-empty string.
def node_name: .spec.nodeName // "";

# Exact kind match. Upstream used `map(.kind) | contains(["Job"])`, which is a
# substring test: CronJob, PyTorchJob, MPIJob, JobSet... owners escaped the
# check. Only pods owned by a batch/v1 Job are allowed to stay unscheduled.
def job_owned: any(.metadata.ownerReferences[]?; .kind == "Job");

# The first terminated container state, if any.
def terminated: [.status.containerStatuses[]? | .state.terminated | objects] | .[0];

def summarize:
  terminated as $t
  | {
      namespace: .metadata.namespace,
      name: .metadata.name,
      uid: .metadata.uid,
      phase: .status.phase,
      node: node_name,
      unscheduled: (.status.phase == "Pending" and node_name == "" and (job_owned | not)),
      reason: ($t.reason // .status.reason // "Unknown"),
      message: ($t.message // .status.message // "")
    };

def count(f): [.[] | select(f)] | length;

($excluded_namespaces | split(",") | map(select(. != ""))) as $excluded
| if type != "object" or (.items | type) != "array" then error("snapshot has no items array") else . end
| [ .items[]
    | select(.metadata.namespace as $ns | any($excluded[]; . == $ns) | not)
    | summarize ]
| [.[] | select(.unscheduled) | {namespace, name, uid}] as $unscheduled_pods
| [.[] | select(.phase == "Failed") | {namespace, name, reason, message}] as $failed_pods
| {
    total: length,
    running: count(.phase == "Running"),
    pending: count(.phase == "Pending"),
    failed: ($failed_pods | length),
    succeeded: count(.phase == "Succeeded"),
    unscheduled: ($unscheduled_pods | length),
    unscheduled_pods: $unscheduled_pods,
    failed_pods: $failed_pods,
    distribution: (map(if .node == "" then "<none>" else .node end)
                   | group_by(.) | map({node: .[0], pods: length}))
  }
| . + {
    verdict: (if .unscheduled > 0 or .failed > 0 then "fail"
              elif .total == 0 then "empty"
              else "pass" end)
  }
