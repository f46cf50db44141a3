//! The run directory as a store of immutable objects (DESIGN.md, "Scaling beyond one machine"):
//! a local path or `s3://bucket/prefix`, through the `object_store` crate. Every object is
//! written once with a create-only put, so two processes that pick the same name find out
//! (one put fails with [`SelfplayError::Exists`]) instead of overwriting each other; nothing
//! needs compare-and-swap, which local files lack.
//!
//! Local paths are read and listed through object_store's `LocalFileSystem`, but written with
//! `camelot_rules::fsio::write_atomic`: each put goes to a hidden staging file (`.NAME.tmp-...`),
//! is synced, hard-linked to its final name (which fails if the name exists) or renamed over it
//! (for a replacing put), and the directory is synced, so a `kill -9` or a power cut never leaves
//! a torn object under a final name. object_store's own staging names (`NAME#N`) would be left
//! beside the objects by a kill, looking like part of the run; hidden names are not. Staging
//! files of either kind are invisible to [`RunStore::list`].
//!
//! object_store is async; the store keeps a small current-thread tokio runtime and blocks on
//! it, so the rest of the program stays synchronous.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::TryStreamExt;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use crate::error::SelfplayError;

/// One object of a listing: its key relative to the run and its size in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Key relative to the run (`models/000003.json`).
    pub key: String,
    /// Size in bytes.
    pub size: u64,
}

/// A run directory on local disk or in an object store.
pub struct RunStore {
    store: Arc<dyn ObjectStore>,
    /// Prefix of the run inside the store (empty for a local path: the store is rooted there).
    prefix: String,
    /// How the user named the run, for messages (`s3://bucket/run` or the path).
    location: String,
    local: Option<PathBuf>,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for RunStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStore").field("location", &self.location).finish()
    }
}

/// Whether `location` names an object store (`scheme://...`) rather than a local path.
pub fn is_url(location: &str) -> bool {
    location
        .split_once("://")
        .is_some_and(|(scheme, _)| !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric()))
}

impl RunStore {
    /// Opens the run at `location`: a local directory (created if missing) or, with the `s3`
    /// feature, `s3://bucket/prefix` with credentials, region and endpoint from the standard AWS
    /// environment variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
    /// `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`).
    pub fn open(location: &str) -> Result<RunStore, SelfplayError> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| {
            SelfplayError::Store { object: location.to_string(), message: format!("starting the I/O runtime: {e}") }
        })?;
        if is_url(location) {
            let (store, prefix) = open_url(location)?;
            return Ok(RunStore {
                store,
                prefix,
                location: location.trim_end_matches('/').to_string(),
                local: None,
                runtime,
            });
        }
        let root = PathBuf::from(location);
        std::fs::create_dir_all(&root).map_err(|e| SelfplayError::io(&root, e))?;
        let store = LocalFileSystem::new_with_prefix(&root)
            .map_err(|e| SelfplayError::Store { object: location.to_string(), message: e.to_string() })?
            .with_fsync(true);
        Ok(RunStore {
            store: Arc::new(store),
            prefix: String::new(),
            location: location.to_string(),
            local: Some(root),
            runtime,
        })
    }

    /// How the run was named (`s3://bucket/run` or a path).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The run's directory when it is a local path.
    pub fn local_root(&self) -> Option<&Path> {
        self.local.as_deref()
    }

    /// The full name of `key`, for messages.
    pub fn describe(&self, key: &str) -> String {
        match &self.local {
            Some(root) => root.join(key).display().to_string(),
            None => format!("{}/{key}", self.location),
        }
    }

    fn path(&self, key: &str) -> ObjectPath {
        if self.prefix.is_empty() {
            ObjectPath::from(key)
        } else {
            ObjectPath::from(format!("{}/{key}", self.prefix))
        }
    }

    fn error(&self, key: &str, e: impl std::fmt::Display) -> SelfplayError {
        SelfplayError::Store { object: self.describe(key), message: e.to_string() }
    }

    /// Writes `bytes` as the new object `key`; fails with [`SelfplayError::Exists`] if the name
    /// is taken (nothing is overwritten) and leaves no partial object on any failure.
    pub fn put_new(&self, key: &str, bytes: Vec<u8>) -> Result<(), SelfplayError> {
        if let Some(root) = &self.local {
            return match camelot_rules::fsio::write_atomic(&root.join(key), &bytes, false) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    Err(SelfplayError::Exists { object: self.describe(key) })
                }
                Err(e) => Err(self.error(key, e)),
            };
        }
        let options = PutOptions::from(PutMode::Create);
        let path = self.path(key);
        let put = self.store.put_opts(&path, PutPayload::from(bytes), options);
        match self.runtime.block_on(put) {
            Ok(_) => Ok(()),
            Err(object_store::Error::AlreadyExists { .. }) => Err(SelfplayError::Exists { object: self.describe(key) }),
            Err(e) => Err(self.error(key, e)),
        }
    }

    /// Writes `bytes` as `key` once: if the name is taken by the same bytes (a deterministic
    /// phase redone after a kill), that is success; different bytes are an error naming it.
    pub fn put_once(&self, key: &str, bytes: Vec<u8>) -> Result<(), SelfplayError> {
        match self.put_new(key, bytes.clone()) {
            Err(SelfplayError::Exists { object }) => match self.get(key)? {
                Some(existing) if existing == bytes => Ok(()),
                _ => Err(SelfplayError::Store {
                    object,
                    message: "exists with other contents than this process computed for it".into(),
                }),
            },
            other => other,
        }
    }

    /// Writes `bytes` as `key`, replacing what is there; readers see the old object or the new
    /// one whole (staged, synced and renamed on disk; one PUT on S3). Only for objects derived
    /// from the put-once ones (merged CSVs, `state.json`), which any writer recomputes the same.
    pub fn put_replace(&self, key: &str, bytes: Vec<u8>) -> Result<(), SelfplayError> {
        if let Some(root) = &self.local {
            return camelot_rules::fsio::write_atomic(&root.join(key), &bytes, true).map_err(|e| self.error(key, e));
        }
        let options = PutOptions::from(PutMode::Overwrite);
        let path = self.path(key);
        let put = self.store.put_opts(&path, PutPayload::from(bytes), options);
        self.runtime.block_on(put).map(|_| ()).map_err(|e| self.error(key, e))
    }

    /// Reads the object `key`, if it exists.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, SelfplayError> {
        let path = self.path(key);
        let read = async {
            let result = self.store.get(&path).await?;
            result.bytes().await
        };
        match self.runtime.block_on(read) {
            Ok(bytes) => Ok(Some(bytes.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error(key, e)),
        }
    }

    /// Whether the object `key` exists.
    pub fn exists(&self, key: &str) -> Result<bool, SelfplayError> {
        match self.runtime.block_on(self.store.head(&self.path(key))) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.error(key, e)),
        }
    }

    /// Removes the object `key` if present. Only the trainer calls it, on its own leftovers
    /// of a generation it never published (objects no reader trusts: see `roles`).
    pub fn delete(&self, key: &str) -> Result<(), SelfplayError> {
        match self.runtime.block_on(self.store.delete(&self.path(key))) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error(key, e)),
        }
    }

    /// Every object under `dir` (a key prefix ending at a `/` boundary, e.g. `models`), at any
    /// depth, sorted by key. One LIST request per 1,000 objects on S3.
    pub fn list(&self, dir: &str) -> Result<Vec<ObjectInfo>, SelfplayError> {
        let prefix = self.path(dir);
        let strip = if self.prefix.is_empty() { String::new() } else { format!("{}/", self.prefix) };
        let listing = self.store.list(Some(&prefix)).try_collect::<Vec<_>>();
        let metas = self.runtime.block_on(listing).map_err(|e| self.error(dir, e))?;
        let mut out: Vec<ObjectInfo> = metas
            .into_iter()
            .filter_map(|m| {
                let key = m.location.as_ref().strip_prefix(strip.as_str())?.to_string();
                // A hidden name is a staging file of a write in flight or cut off by a kill.
                if key.rsplit('/').next().is_some_and(|name| name.starts_with('.')) {
                    return None;
                }
                Some(ObjectInfo { key, size: m.size })
            })
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }
}

#[cfg(feature = "s3")]
fn open_url(location: &str) -> Result<(Arc<dyn ObjectStore>, String), SelfplayError> {
    use object_store::aws::AmazonS3Builder;
    let Some(rest) = location.strip_prefix("s3://") else {
        return Err(SelfplayError::Store {
            object: location.to_string(),
            message: "only s3:// URLs (and local paths) are supported".into(),
        });
    };
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(SelfplayError::Store { object: location.to_string(), message: "no bucket in the URL".into() });
    }
    let store = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .build()
        .map_err(|e| SelfplayError::Store { object: location.to_string(), message: e.to_string() })?;
    Ok((Arc::new(store), prefix.trim_matches('/').to_string()))
}

#[cfg(not(feature = "s3"))]
fn open_url(location: &str) -> Result<(Arc<dyn ObjectStore>, String), SelfplayError> {
    Err(SelfplayError::Store {
        object: location.to_string(),
        message: "this camelot was built without object-store support: build it with `--features s3`".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("camelot-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_local_store_puts_once_lists_and_reads() {
        let dir = temp("basic");
        let store = RunStore::open(dir.to_str().expect("utf-8")).expect("opens");
        assert_eq!(store.list("selfplay").expect("lists"), vec![]);
        store.put_new("selfplay/000000/00001-000000.shard", b"abc".to_vec()).expect("put");
        let again = store.put_new("selfplay/000000/00001-000000.shard", b"xyz".to_vec());
        assert!(matches!(again, Err(SelfplayError::Exists { .. })), "{again:?}");
        assert_eq!(store.get("selfplay/000000/00001-000000.shard").expect("get"), Some(b"abc".to_vec()));
        assert_eq!(store.get("models/000000.json").expect("get"), None);
        // A staging file left by a killed writer is not an object.
        std::fs::write(dir.join("selfplay/000000/00002-000000.shard#1"), b"torn").expect("write");
        std::fs::write(dir.join("selfplay/000000/.00003-000000.shard.tmp-1-0"), b"torn").expect("write");
        let listed = store.list("selfplay").expect("lists");
        assert_eq!(listed, vec![ObjectInfo { key: "selfplay/000000/00001-000000.shard".into(), size: 3 }]);
        assert!(store.exists("selfplay/000000/00001-000000.shard").expect("head"));
        store.delete("selfplay/000000/00001-000000.shard").expect("delete");
        assert!(!store.exists("selfplay/000000/00001-000000.shard").expect("head"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn urls_are_told_from_paths() {
        assert!(is_url("s3://bucket/run"));
        assert!(!is_url("runs/quick"));
        assert!(!is_url("/tmp/a://b"));
    }
}
