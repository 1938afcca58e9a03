//! A gateway's catalog: the fleet's published one, copied into its cache and kept up to
//! date as new epochs are announced (or found by a check every few seconds, for notices
//! missed while NATS was away).

use std::time::Duration;

use anyhow::Result;
use toolhost_catalog::{Root, RootOrigin};
use toolhost_fleet::Gateway;
use toolhost_fleet::catalog::Materialized;
use toolhost_store::{Published, Store};

/// How often a gateway checks the store for an epoch it was not told of.
const CHECK_EVERY: Duration = Duration::from_secs(5);

/// Waits for a published catalog, copies it, and keeps the copy up to date in the
/// background. Returns the roots to serve.
pub async fn serve_published(
    store: Store,
    gateway: Gateway,
    copy: Materialized,
) -> Result<Vec<Root>> {
    let mut told = false;
    let published = loop {
        match store.published_catalog().await {
            Ok(Some(published)) => break published,
            Ok(None) => {}
            Err(e) => crate::warn(&format!("reading the published catalog: {e}")),
        }
        if !told {
            eprintln!(
                "waiting for the fleet's catalog to be published (`toolhost cluster publish`)"
            );
            told = true;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let roots = apply(&store, &gateway, &copy, &published).await?;
    let names: Vec<String> = published.roots.iter().map(|r| r.name.clone()).collect();
    eprintln!("serving the fleet's catalog, epoch {}", published.epoch);
    tokio::spawn(follow(store, gateway, copy, published.epoch, names));
    Ok(roots
        .into_iter()
        .map(|path| Root {
            path,
            origin: RootOrigin::Flag,
        })
        .collect())
}

async fn apply(
    store: &Store,
    gateway: &Gateway,
    copy: &Materialized,
    published: &Published,
) -> Result<Vec<std::path::PathBuf>> {
    let (roots, known) = copy
        .apply(store, published)
        .await
        .map_err(anyhow::Error::msg)?;
    for (dir, hash) in known {
        gateway.seed_bundle(dir, hash).await;
    }
    gateway.serving_epoch(published.epoch);
    Ok(roots)
}

/// Applies every newer epoch as it is announced or found.
async fn follow(
    store: Store,
    gateway: Gateway,
    copy: Materialized,
    mut epoch: i64,
    names: Vec<String>,
) {
    let mut changes = gateway.catalog_changes();
    loop {
        tokio::select! {
            _ = changes.recv() => {}
            () = tokio::time::sleep(CHECK_EVERY) => {}
        }
        let newest = match store.catalog_epoch().await {
            Ok(n) => n,
            Err(e) => {
                tracing::debug!("checking the catalog's epoch: {e}");
                continue;
            }
        };
        if newest <= epoch {
            continue;
        }
        let published = match store.published_catalog().await {
            Ok(Some(p)) => p,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!("reading the published catalog: {e}");
                continue;
            }
        };
        let now: Vec<String> = published.roots.iter().map(|r| r.name.clone()).collect();
        if now != names {
            tracing::warn!(
                "the published catalog's roots changed ({names:?} → {now:?}); tools of roots \
                 added or removed are served after a restart"
            );
        }
        match apply(&store, &gateway, &copy, &published).await {
            Ok(_) => {
                tracing::info!(epoch = published.epoch, "serving the catalog's new epoch");
                epoch = published.epoch;
            }
            Err(e) => tracing::warn!("applying the catalog's epoch {}: {e:#}", published.epoch),
        }
    }
}
