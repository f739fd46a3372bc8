//! Synthetic pods and events with the shapes a real cluster returns, for
//! timelines and large states the recorded corpus does not cover.

use serde_json::{json, Value};

/// A pod's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Bound and running.
    Running,
    /// Waiting: unscheduled when it has no node.
    Pending,
    /// A container failed (or the pod was evicted).
    Failed,
    /// Ran to completion.
    Succeeded,
}

impl Phase {
    /// The `status.phase` string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "Running",
            Self::Pending => "Pending",
            Self::Failed => "Failed",
            Self::Succeeded => "Succeeded",
        }
    }
}

/// A pod to render as the apiserver would return it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pod {
    /// `metadata.namespace`
    pub namespace: String,
    /// `metadata.name`
    pub name: String,
    /// `status.phase`
    pub phase: Phase,
    /// `spec.nodeName` (None = not bound).
    pub node: Option<String>,
    /// The kind of its controller (`ReplicaSet`, `Job`, `PyTorchJob`, …).
    pub owner_kind: Option<String>,
    /// For failed pods: `Evicted` (pod level) or a container termination reason.
    pub reason: Option<String>,
    /// A number that changes the uid: a pod deleted and created again under
    /// the same name is another pod.
    pub generation: u32,
}

impl Pod {
    /// A running pod on `node`.
    pub fn running(namespace: &str, name: &str, node: &str) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
            phase: Phase::Running,
            node: Some(node.into()),
            owner_kind: Some("ReplicaSet".into()),
            reason: None,
            generation: 0,
        }
    }

    /// A pending pod the scheduler could not place.
    pub fn unschedulable(namespace: &str, name: &str) -> Self {
        Self {
            phase: Phase::Pending,
            node: None,
            ..Self::running(namespace, name, "")
        }
    }

    /// The pod's uid (stable for a name and generation).
    pub fn uid(&self) -> String {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let key = format!("{}/{}#{}", self.namespace, self.name, self.generation);
        for b in key.bytes() {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let h = format!("{hash:016x}");
        format!(
            "{}-{}-{}-{:04x}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            self.generation
        )
    }

    /// `namespace/name`
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// The pod object (without kind/apiVersion, as the apiserver stores it).
    pub fn to_json(&self) -> Value {
        let owner = self.owner_kind.as_ref().map_or(Value::Null, |kind| {
            let api = match kind.as_str() {
                "Job" | "CronJob" => "batch/v1",
                "ReplicaSet" | "StatefulSet" => "apps/v1",
                _ => "kubeflow.org/v1",
            };
            json!([{"apiVersion": api, "kind": kind, "name": format!("{}-owner", self.name),
                    "uid": format!("owner-{}", self.uid()), "controller": true, "blockOwnerDeletion": true}])
        });
        let mut metadata = json!({
            "name": self.name, "namespace": self.namespace, "uid": self.uid(),
            "resourceVersion": "4242", "creationTimestamp": "2025-01-01T11:00:00Z",
            "labels": {"app": self.name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-')},
        });
        if !owner.is_null() {
            metadata["ownerReferences"] = owner;
        }
        let mut spec = json!({
            "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m"}}}],
            "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "serviceAccountName": "default",
        });
        if let Some(node) = &self.node {
            spec["nodeName"] = node.as_str().into();
        }
        json!({"metadata": metadata, "spec": spec, "status": self.status()})
    }

    fn status(&self) -> Value {
        let phase = self.phase.as_str();
        let started = "2025-01-01T11:00:05Z";
        let scheduled = |ok: bool| {
            if ok {
                json!({"type": "PodScheduled", "status": "True", "lastTransitionTime": started})
            } else {
                json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                       "lastTransitionTime": started,
                       "message": "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."})
            }
        };
        let mut status = json!({"phase": phase, "qosClass": "Burstable"});
        match (self.phase, &self.node) {
            (Phase::Pending, None) => {
                status["conditions"] = json!([scheduled(false)]);
                return status;
            }
            (Phase::Pending, Some(_)) => {
                status["conditions"] = json!([scheduled(true)]);
                status["containerStatuses"] = json!([{"name": "main", "ready": false, "restartCount": 0,
                    "image": "registry.k8s.io/pause:3.10", "imageID": "",
                    "state": {"waiting": {"reason": "ContainerCreating"}}}]);
            }
            (Phase::Running, _) => {
                status["conditions"] = json!([scheduled(true),
                    {"type": "Ready", "status": "True", "lastTransitionTime": started}]);
                status["containerStatuses"] = json!([{"name": "main", "ready": true, "restartCount": 0,
                    "image": "registry.k8s.io/pause:3.10", "imageID": "", "started": true,
                    "state": {"running": {"startedAt": started}}}]);
            }
            (Phase::Failed, _) if self.reason.as_deref() == Some("Evicted") => {
                status["reason"] = "Evicted".into();
                status["message"] = "The node was low on resource: memory.".into();
            }
            (Phase::Failed | Phase::Succeeded, _) => {
                let (reason, code) = match self.phase {
                    Phase::Succeeded => ("Completed".to_owned(), 0),
                    _ => (self.reason.clone().unwrap_or_else(|| "Error".into()), 1),
                };
                status["conditions"] = json!([scheduled(true)]);
                status["containerStatuses"] = json!([{"name": "main", "ready": false, "restartCount": 0,
                    "image": "registry.k8s.io/pause:3.10", "imageID": "",
                    "state": {"terminated": {"reason": reason, "exitCode": code,
                        "startedAt": started, "finishedAt": "2025-01-01T11:30:00Z",
                        "message": if code == 0 { "" } else { "exit status 1" }}}}]);
            }
        }
        if self.node.is_some() {
            status["hostIP"] = "10.0.0.1".into();
            let ip = format!(
                "10.244.{}.{}",
                self.name.len() % 250,
                self.uid().len() + self.name.len()
            );
            status["podIP"] = ip.as_str().into();
            status["podIPs"] = json!([{"ip": ip}]);
            status["startTime"] = started.into();
        }
        status
    }
}

/// A FailedScheduling event for `pod`, last seen `seconds` after 11:00:00
/// (the event name carries the time, so one pod can have many events).
pub fn failed_scheduling_event(pod: &Pod, seconds: u32, count: u32) -> Value {
    let seconds = seconds.min(3599);
    let time = format!("2025-01-01T11:{:02}:{:02}Z", seconds / 60, seconds % 60);
    json!({
        "metadata": {"name": format!("{}.{:x}", pod.name, 0x17a0_0000 + seconds), "namespace": pod.namespace,
                     "uid": format!("event-{}-{seconds}", pod.uid()), "creationTimestamp": time},
        "involvedObject": {"kind": "Pod", "namespace": pod.namespace, "name": pod.name,
                           "uid": pod.uid(), "apiVersion": "v1", "resourceVersion": "4242"},
        "reason": "FailedScheduling",
        "message": "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.",
        "source": {"component": "default-scheduler"},
        "firstTimestamp": time, "lastTimestamp": time, "count": count, "type": "Warning",
        "eventTime": null, "reportingComponent": "default-scheduler", "reportingInstance": "",
    })
}

/// A cluster of [`many_running_pods`]`(n)` and no events.
pub fn many_running(n: usize) -> crate::replay::State {
    let pods = many_running_pods(n).iter().map(Pod::to_json).collect();
    crate::replay::State::new(pods, vec![])
}

/// `n` running pods spread over namespaces and four nodes (for pagination).
pub fn many_running_pods(n: usize) -> Vec<Pod> {
    (0..n)
        .map(|i| {
            let namespace = format!("team-{}", i % 7);
            Pod::running(
                &namespace,
                &format!("app-{i:05}"),
                &format!("kwok-node-{}", i % 4),
            )
        })
        .collect()
}

/// `n` running pods `apps/web-I` on three nodes: the healthy front of a
/// list whose last items (in namespaces after `apps`) decide the verdict.
pub fn web_pods(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            Pod::running("apps", &format!("web-{i}"), &format!("kwok-node-{}", i % 3)).to_json()
        })
        .collect()
}
