# job-rule.jq: upstream's Job rule, for a host's verify_pods() rendered
# without the feature exact-owner-kinds.
#
# Upstream's function does not count a pending pod without a node when one
# of its owners' kinds CONTAINS "Job" (`contains("Job")`: Job, CronJob, but
# also PyTorchJob, MPIJob, TFJob...). report.jq excuses the pods owned by
# the kinds listed in $excluded_owner_kinds, exact match; so the drivers
# put this program in front of it, and it lists every owner kind of the
# snapshot that contains "Job". The same pods are excused as upstream's.
#
# Input:  the documents of a list as `jq -s` reads them (report.jq's or
#         workloads.jq's input).
# Output: nothing of its own: it binds $excluded_owner_kinds, comma-joined,
#         for the program that follows it.

# Each step keeps only the values of the expected type, so that input
# report.jq refuses is refused there, in its words, never here.
( [ .[] | objects | .items | arrays | .[] | objects
    | .metadata | objects | .ownerReferences | arrays | .[] | objects
    | .kind | strings
    | select(contains("Job")) ]
  | unique
  | join(",")
) as $excluded_owner_kinds
|
