use std::fmt;

/// BLAKE3 digest identifying one version of a tool folder's definition.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentHash([u8; 32]);

impl ContentHash {
    /// Hash of the parts that define a tool for the catalog: TOOL.md and which entry file exists.
    pub(crate) fn of_definition(tool_md: &[u8], entry_name: Option<&str>) -> Self {
        let mut h = blake3::Hasher::new();
        h.update(&(tool_md.len() as u64).to_le_bytes());
        h.update(tool_md);
        h.update(entry_name.unwrap_or("").as_bytes());
        ContentHash(*h.finalize().as_bytes())
    }

    /// The digest a hasher has accumulated so far.
    pub(crate) fn from_hasher(h: &blake3::Hasher) -> Self {
        ContentHash(*h.finalize().as_bytes())
    }

    /// Lower-case hex, for printing and for keys that outlive the process.
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentHash({})", &self.to_hex()[..16])
    }
}
