//! The table file (docs/FORMATS.md, "Solver tables"): a short text header, then the reachable
//! bitmap over the index and one value code per reachable position. Written atomically.

use crate::error::SolverError;
use crate::index::Index;
use crate::solve::Table;
use camelot_rules::Ruleset;
use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// First line of every table file.
pub const MAGIC: &str = "camelot-solver table 1";
/// Longest header accepted, in bytes.
pub const MAX_HEADER: usize = 4096;

/// The header fields of a table file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Variant name.
    pub variant: String,
    /// Entries of the index (the bitmap has this many bits, rounded up to 64).
    pub index: u64,
    /// Reachable positions (value codes that follow the bitmap).
    pub positions: u64,
    /// FNV-1a 64 of the body.
    pub checksum: u64,
}

impl Header {
    /// The header as written: the magic line, `key value` lines, an empty line.
    pub fn format(&self) -> String {
        format!(
            "{MAGIC}\nvariant {}\nindex {}\npositions {}\nchecksum fnv1a64:{:016x}\n\n",
            self.variant, self.index, self.positions, self.checksum
        )
    }

    /// Reads a header from the start of `bytes`; returns it and the body's offset. Errors name
    /// the header line at fault.
    pub fn parse(bytes: &[u8]) -> Result<(Header, usize), String> {
        let end = bytes
            .windows(2)
            .take(MAX_HEADER)
            .position(|w| w == b"\n\n")
            .ok_or_else(|| format!("no header end (an empty line) within the first {MAX_HEADER} bytes"))?;
        let text = std::str::from_utf8(&bytes[..end]).map_err(|_| "the header is not UTF-8".to_string())?;
        let mut lines = text.split('\n');
        if lines.next() != Some(MAGIC) {
            return Err(format!("line 1: expected `{MAGIC}`"));
        }
        let (mut variant, mut index, mut positions, mut checksum) = (None, None, None, None);
        for (n, line) in lines.enumerate() {
            let at = n + 2;
            let (key, value) = line.split_once(' ').ok_or_else(|| format!("line {at}: expected `KEY VALUE`"))?;
            let number = || value.parse::<u64>().map_err(|_| format!("line {at}: `{value}` is not a whole number"));
            let slot_taken = |taken: bool| if taken { Err(format!("line {at}: `{key}` given twice")) } else { Ok(()) };
            match key {
                "variant" => {
                    slot_taken(variant.is_some())?;
                    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
                        return Err(format!("line {at}: `{value}` is not a variant name"));
                    }
                    variant = Some(value.to_string());
                }
                "index" => {
                    slot_taken(index.is_some())?;
                    index = Some(number()?);
                }
                "positions" => {
                    slot_taken(positions.is_some())?;
                    positions = Some(number()?);
                }
                "checksum" => {
                    slot_taken(checksum.is_some())?;
                    let hex = value
                        .strip_prefix("fnv1a64:")
                        .filter(|h| h.len() == 16)
                        .ok_or_else(|| format!("line {at}: expected `fnv1a64:` and 16 hex digits"))?;
                    checksum = Some(
                        u64::from_str_radix(hex, 16).map_err(|_| format!("line {at}: `{hex}` is not hexadecimal"))?,
                    );
                }
                _ => return Err(format!("line {at}: unknown key `{key}`")),
            }
        }
        let missing = |k: &str| format!("the header has no `{k}` line");
        let header = Header {
            variant: variant.ok_or_else(|| missing("variant"))?,
            index: index.ok_or_else(|| missing("index"))?,
            positions: positions.ok_or_else(|| missing("positions"))?,
            checksum: checksum.ok_or_else(|| missing("checksum"))?,
        };
        if header.positions > header.index {
            return Err(format!("{} positions in an index of {}", header.positions, header.index));
        }
        Ok((header, end + 2))
    }
}

/// FNV-1a, 64 bits: a checksum with no dependency.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> SolverError + '_ {
    move |error| SolverError::Io { path: path.to_path_buf(), error }
}

fn words_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Writes `path` through `write`: to a temporary name beside it, synced, then renamed, so a
/// reader never sees half a file. Refuses an existing `path` unless `force`.
pub(crate) fn write_atomically(
    path: &Path,
    force: bool,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<(), SolverError> {
    if !force && path.exists() {
        return Err(SolverError::Exists { path: path.to_path_buf() });
    }
    let mut tmp_name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp: PathBuf = path.with_file_name(tmp_name);
    let result = (|| {
        let file = File::create(&tmp).map_err(io(&tmp))?;
        let mut out = BufWriter::new(file);
        write(&mut out).map_err(io(&tmp))?;
        let file = out.into_inner().map_err(|e| io(&tmp)(e.into_error()))?;
        file.sync_all().map_err(io(&tmp))?;
        fs::rename(&tmp, path).map_err(io(path))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // Best effort: some file systems cannot sync a directory.
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes `table` to `path` (temporary name beside it, synced, renamed); refuses an existing `path`
/// unless `force`.
pub fn write_table(table: &Table, path: &Path, force: bool) -> Result<(), SolverError> {
    let bitmap = words_bytes(table.reachable_words());
    let mut sum = Fnv::new();
    sum.update(&bitmap);
    sum.update(table.codes());
    let header = Header {
        variant: table.variant().to_string(),
        index: table.index().len(),
        positions: table.len(),
        checksum: sum.0,
    };
    write_atomically(path, force, |out| {
        out.write_all(header.format().as_bytes())?;
        out.write_all(&bitmap)?;
        out.write_all(table.codes())
    })
}

/// Reads a table written by [`write_table`] for `rules`' variant, checking its header, sizes and
/// checksum.
pub fn read_table(rules: &Ruleset, path: &Path) -> Result<Table, SolverError> {
    let bad = |reason: String| SolverError::BadTable { path: path.to_path_buf(), reason };
    let file = File::open(path).map_err(io(path))?;
    let mut input = BufReader::new(file);
    let mut head = Vec::with_capacity(MAX_HEADER);
    (&mut input).take(MAX_HEADER as u64).read_to_end(&mut head).map_err(io(path))?;
    let (header, body_at) = Header::parse(&head).map_err(bad)?;
    if header.variant != rules.name() {
        return Err(bad(format!("a table of `{}`, not `{}`", header.variant, rules.name())));
    }
    let index = Index::new(rules)?;
    if header.index != index.len() {
        return Err(bad(format!(
            "index of {} entries; this build's index of {} has {}",
            header.index,
            rules.name(),
            index.len()
        )));
    }
    let words = index.len().div_ceil(64) as usize;
    let mut body = head[body_at..].to_vec();
    let expected = words as u64 * 8 + header.positions;
    body.reserve(expected.saturating_sub(body.len() as u64) as usize);
    input.read_to_end(&mut body).map_err(io(path))?;
    if body.len() as u64 != expected {
        return Err(bad(format!("body of {} bytes; the header implies {expected}", body.len())));
    }
    let mut sum = Fnv::new();
    sum.update(&body);
    if sum.0 != header.checksum {
        return Err(bad(format!("checksum {:016x}, the header says {:016x}", sum.0, header.checksum)));
    }
    let reachable: Vec<u64> =
        body[..words * 8].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
    let counted: u64 = reachable.iter().map(|w| u64::from(w.count_ones())).sum();
    if counted != header.positions {
        return Err(bad(format!("the bitmap marks {counted} positions, the header says {}", header.positions)));
    }
    let values = body.split_off(words * 8);
    Ok(Table::from_parts(header.variant, index, reachable, values))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Header {
        Header {
            variant: "camette".to_string(),
            index: 904_336_449,
            positions: 12_345,
            checksum: 0xdead_beef_0123_4567,
        }
    }

    #[test]
    fn header_round_trips_and_errors_name_the_line() {
        let text = sample().format();
        let (h, at) = Header::parse(text.as_bytes()).expect("parses");
        assert_eq!(h, sample());
        assert_eq!(at, text.len());
        let broken = text.replace("positions 12345", "positions many");
        assert!(Header::parse(broken.as_bytes()).unwrap_err().contains("line 4"));
        let unknown = text.replace("index", "size");
        assert!(Header::parse(unknown.as_bytes()).unwrap_err().contains("unknown key `size`"));
        assert!(Header::parse(b"camelot-solver table 1\nvariant camette\n\n").unwrap_err().contains("no `index`"));
    }

    proptest! {
        #[test]
        fn mutated_headers_never_panic(pos in 0usize..120, byte in any::<u8>(), cut in 0usize..130) {
            let mut bytes = sample().format().into_bytes();
            bytes.extend_from_slice(&[1, 2, 3]);
            let p = pos % bytes.len();
            bytes[p] = byte;
            bytes.truncate(cut.max(1).min(bytes.len()));
            if let Ok((h, at)) = Header::parse(&bytes) {
                prop_assert!(at <= bytes.len());
                prop_assert!(h.positions <= h.index);
            }
        }
    }
}
