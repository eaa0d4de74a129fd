//! Which node an op goes to, computed once and used twice: by the scheduler (whose
//! per-node in-flight slot the op takes) and by the driver (the `Targeted` policy's pick),
//! so an op waits for, and is sent to, the same node. The choice: the first replica of
//! the token (the driver's ClusterState replica set), in the local DC when one is set,
//! that is connected; else the first enabled one. Retries and fallbacks are the driver's
//! DefaultPolicy's (token-aware; with a local DC: no remote DCs).

use std::sync::Arc;

use scylla::cluster::{ClusterState, Node, NodeRef};
use scylla::policies::load_balancing::{FallbackPlan, LoadBalancingPolicy, RoutingInfo};
use scylla::routing::{Shard, Token};

pub fn choose(cluster: &ClusterState, ks: &str, table: &str, token: Token,
              local_dc: Option<&str>) -> Option<(Arc<Node>, Shard)> {
    let replicas = cluster.get_token_endpoints(ks, table, token);
    let local = |n: &Arc<Node>| local_dc.is_none_or(|dc| n.datacenter.as_deref() == Some(dc));
    replicas
        .iter()
        .find(|(n, _)| local(n) && n.is_enabled() && n.is_connected())
        .or_else(|| replicas.iter().find(|(n, _)| local(n) && n.is_enabled()))
        .cloned()
}

#[derive(Debug)]
pub struct Targeted {
    pub inner: Arc<dyn LoadBalancingPolicy>,
    pub local_dc: Option<String>,
}

impl LoadBalancingPolicy for Targeted {
    fn pick<'a>(&'a self, request: &'a RoutingInfo, cluster: &'a ClusterState)
        -> Option<(NodeRef<'a>, Option<Shard>)> {
        if let (Some(token), Some(table)) = (request.token, request.table) {
            if let Some((node, shard)) =
                choose(cluster, table.ks_name(), table.table_name(), token, self.local_dc.as_deref())
            {
                if let Some(node_ref) =
                    cluster.get_nodes_info().iter().find(|n| n.host_id == node.host_id)
                {
                    return Some((node_ref, Some(shard)));
                }
            }
        }
        self.inner.pick(request, cluster)
    }

    fn fallback<'a>(&'a self, request: &'a RoutingInfo, cluster: &'a ClusterState) -> FallbackPlan<'a> {
        self.inner.fallback(request, cluster)
    }

    fn name(&self) -> String {
        "loadtower.Targeted(DefaultPolicy)".into()
    }
}
