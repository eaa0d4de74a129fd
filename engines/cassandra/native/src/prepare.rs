//! Preparing while a node is down or paused. The driver prepares on one connection to
//! every node and waits for all of them (a paused node: forever). So each statement gets
//! `FIRST_TRY` through the session; if that passes, the nodes that answer a one-row
//! query within `PROBE` are found and a short-lived helper session limited to them (the
//! same settings, a host filter) prepares the statements. A prepared statement is only
//! its id and metadata: the main session executes it, and a node that lacks it answers
//! UNPREPARED, on which the driver prepares it there (when the node is back).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::policies::host_filter::AllowListHostFilter;
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Statement;

const FIRST_TRY: Duration = Duration::from_secs(5);
const PROBE: Duration = Duration::from_secs(2);

/// The nodes that answer a query now.
async fn live_nodes(session: &Session) -> Vec<SocketAddr> {
    let state = session.get_cluster_state();
    let probes = state.get_nodes_info().iter().map(|node| {
        let mut stmt = Statement::new("SELECT release_version FROM system.local");
        stmt.set_load_balancing_policy(Some(SingleTargetLoadBalancingPolicy::new(
            NodeIdentifier::Node(node.clone()), None)));
        stmt.set_request_timeout(Some(PROBE));
        let addr = SocketAddr::new(node.address.ip(), node.address.port());
        async move {
            let ok = tokio::time::timeout(PROBE * 2, session.query_unpaged(stmt, &[])).await;
            matches!(ok, Ok(Ok(_))).then_some(addr)
        }
    });
    join_all(probes).await.into_iter().flatten().collect()
}

/// Prepare every statement (name -> CQL), each within `limit` in all.
pub async fn prepare_all(session: &Session, make_builder: impl Fn() -> SessionBuilder,
                         statements: &HashMap<String, String>, limit: Duration)
    -> Result<HashMap<String, Arc<PreparedStatement>>, String> {
    let mut out = HashMap::new();
    let mut helper: Option<Session> = None;
    for (name, cql) in statements {
        if helper.is_none() {
            match tokio::time::timeout(FIRST_TRY.min(limit), session.prepare(cql.as_str())).await {
                Ok(Ok(p)) => {
                    out.insert(name.clone(), Arc::new(p));
                    continue;
                }
                Ok(Err(e)) => return Err(format!("preparing '{name}': {e}")),
                Err(_) => {
                    let live = live_nodes(session).await;
                    if live.is_empty() {
                        return Err(format!("preparing '{name}': no node answers"));
                    }
                    let filter = AllowListHostFilter::new(live.iter().copied())
                        .map_err(|e| format!("preparing '{name}': {e}"))?;
                    let built = tokio::time::timeout(
                        limit,
                        make_builder().known_nodes_addr(live.iter().copied())
                            .host_filter(Arc::new(filter)).build(),
                    )
                    .await
                    .map_err(|_| format!("preparing '{name}' on the live nodes: timed out"))?
                    .map_err(|e| format!("preparing '{name}' on the live nodes: {e}"))?;
                    helper = Some(built);
                }
            }
        }
        let on = helper.as_ref().expect("set above");
        let p = tokio::time::timeout(limit, on.prepare(cql.as_str()))
            .await
            .map_err(|_| format!("preparing '{name}' on the live nodes: timed out"))?
            .map_err(|e| format!("preparing '{name}' on the live nodes: {e}"))?;
        out.insert(name.clone(), Arc::new(p));
    }
    Ok(out)
}
