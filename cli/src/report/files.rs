//! The events files of a report: each file named, with its rotated siblings (`FILE.1` … `FILE.N`,
//! oldest first, as the JSONL exporter renames them), read once each — a file is known by its
//! device and inode, so a file named twice, or renamed by a rotation between two reads, is read
//! on from where it was left.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Rotated siblings looked for (`FILE.1` … `FILE.MAX_ROTATED`, up to the first missing one).
pub const MAX_ROTATED: u32 = 1_000;

/// Identity of a file across renames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FileId(u64, u64);

#[cfg(unix)]
fn file_id(m: &std::fs::Metadata, _: &Path) -> FileId {
    use std::os::unix::fs::MetadataExt;
    FileId(m.dev(), m.ino())
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata, p: &Path) -> FileId {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    p.hash(&mut h);
    FileId(h.finish(), 0)
}

/// How far a file has been read.
#[derive(Debug, Clone, Copy, Default)]
struct Cursor {
    offset: u64,
    lines: u64,
}

/// One file read (for the page's list of files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// The path it was last seen at.
    pub path: String,
    /// Bytes read from it.
    pub bytes: u64,
}

/// What a read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing new.
    None,
    /// New lines were read.
    Grew,
    /// A file is shorter than what was read from it (truncated or replaced in place): the
    /// figures no longer describe the files; read everything again.
    Shrank,
}

/// The files named on the command line, each with its rotated siblings.
#[derive(Debug, Clone)]
pub struct FileSet {
    named: Vec<PathBuf>,
    rotated: bool,
    cursors: HashMap<FileId, Cursor>,
    /// In order of first reading.
    order: Vec<(FileId, String)>,
}

impl FileSet {
    /// The files `named`, and (with `rotated`) their rotated siblings.
    pub fn new(named: Vec<PathBuf>, rotated: bool) -> FileSet {
        FileSet { named, rotated, cursors: HashMap::new(), order: Vec::new() }
    }

    /// Every file there is now, oldest first: for each named file `FILE.N` … `FILE.1`, then
    /// `FILE`. A named file that does not exist is an error when `must_exist`.
    pub fn paths(&self, must_exist: bool) -> io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for p in &self.named {
            if self.rotated {
                let mut rotated = Vec::new();
                for n in 1..=MAX_ROTATED {
                    let mut s = p.clone().into_os_string();
                    s.push(format!(".{n}"));
                    let r = PathBuf::from(s);
                    if !r.is_file() {
                        break;
                    }
                    rotated.push(r);
                }
                out.extend(rotated.into_iter().rev());
            }
            match std::fs::metadata(p) {
                Ok(_) => out.push(p.clone()),
                Err(e) if must_exist || e.kind() != io::ErrorKind::NotFound => {
                    return Err(io::Error::new(e.kind(), format!("cannot read {}: {}", p.display(), e.kind())))
                }
                Err(_) => {}
            }
        }
        Ok(out)
    }

    /// Total bytes not read yet (for the progress bar).
    pub fn unread_bytes(&self, paths: &[PathBuf]) -> u64 {
        let mut seen = HashMap::new();
        for p in paths {
            if let Ok(m) = std::fs::metadata(p) {
                let id = file_id(&m, p);
                let done = self.cursors.get(&id).map_or(0, |c| c.offset);
                seen.insert(id, m.len().saturating_sub(done));
            }
        }
        seen.values().sum()
    }

    /// The files read so far, in order of first reading.
    pub fn files(&self) -> Vec<FileInfo> {
        self.order.iter().map(|(id, path)| FileInfo { path: path.clone(), bytes: self.cursors[id].offset }).collect()
    }

    /// Reads every line of `paths` not read yet, handing each (without its newline) to `line`
    /// with its file's display name and 1-based number; `on_bytes` gets the bytes consumed as
    /// reading goes. With `live`, a last line without its newline is left for the next read (a
    /// writer may be in the middle of it); otherwise it is read as a line.
    pub fn read_new(
        &mut self,
        paths: &[PathBuf],
        live: bool,
        line: &mut dyn FnMut(&[u8], &str, u64),
        on_bytes: &mut dyn FnMut(u64),
    ) -> io::Result<Change> {
        let mut change = Change::None;
        let mut buf = Vec::with_capacity(64 * 1024);
        for p in paths {
            let err = |e: io::Error| io::Error::new(e.kind(), format!("cannot read {}: {}", p.display(), e.kind()));
            let mut f = match File::open(p) {
                Ok(f) => f,
                // Rotated away between listing and opening: it is found under its new name next time.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(err(e)),
            };
            let m = f.metadata().map_err(err)?;
            let id = file_id(&m, p);
            let display = p.display().to_string();
            let cursor = match self.cursors.get(&id) {
                Some(c) => *c,
                None => {
                    self.order.push((id, display.clone()));
                    Cursor::default()
                }
            };
            if m.len() < cursor.offset {
                return Ok(Change::Shrank);
            }
            if let Some(entry) = self.order.iter_mut().find(|(i, _)| *i == id) {
                entry.1 = display.clone();
            }
            if m.len() == cursor.offset {
                self.cursors.insert(id, cursor);
                continue;
            }
            f.seek(SeekFrom::Start(cursor.offset)).map_err(err)?;
            let mut r = BufReader::with_capacity(256 * 1024, f);
            let mut c = cursor;
            loop {
                buf.clear();
                let n = r.read_until(b'\n', &mut buf).map_err(err)?;
                if n == 0 {
                    break;
                }
                let complete = buf.last() == Some(&b'\n');
                if !complete && live {
                    break;
                }
                c.offset += n as u64;
                c.lines += 1;
                let text = buf.strip_suffix(b"\n").unwrap_or(&buf);
                let text = text.strip_suffix(b"\r").unwrap_or(text);
                line(text, &display, c.lines);
                on_bytes(n as u64);
                change = Change::Grew;
            }
            self.cursors.insert(id, c);
        }
        Ok(change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines(set: &mut FileSet, live: bool) -> Vec<String> {
        let paths = set.paths(false).unwrap();
        let mut out = Vec::new();
        set.read_new(&paths, live, &mut |l, _, _| out.push(String::from_utf8_lossy(l).into_owned()), &mut |_| {})
            .unwrap();
        out
    }

    #[test]
    fn rotated_files_are_read_oldest_first_and_followed_across_a_rotation() {
        let dir = std::env::temp_dir().join(format!("mcplens-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("e.jsonl");
        let with = |n: &str| dir.join(format!("e.jsonl{n}"));
        std::fs::write(with(".2"), "a\n").unwrap();
        std::fs::write(with(".1"), "b\n").unwrap();
        std::fs::write(&p, "c\nd").unwrap();
        let mut set = FileSet::new(vec![p.clone(), p.clone()], true);
        assert_eq!(lines(&mut set.clone(), false), ["a", "b", "c", "d"], "named twice, read once");
        assert_eq!(lines(&mut set, true), ["a", "b", "c"], "live: the unfinished line waits");
        // The writer finishes its line, writes one more, and rotates.
        std::fs::OpenOptions::new().append(true).open(&p).unwrap().write_all(b"!\ne\n").unwrap();
        std::fs::rename(with(".2"), with(".3")).unwrap();
        std::fs::rename(with(".1"), with(".2")).unwrap();
        std::fs::rename(&p, with(".1")).unwrap();
        std::fs::write(&p, "f\n").unwrap();
        assert_eq!(lines(&mut set, true), ["d!", "e", "f"]);
        let files = set.files();
        assert_eq!(files.len(), 4);
        assert!(files[2].path.ends_with("e.jsonl.1"), "{files:?}");
        // Truncated in place: everything must be read again.
        std::fs::write(&p, "").unwrap();
        let paths = set.paths(true).unwrap();
        let change = set.read_new(&paths, true, &mut |_, _, _| {}, &mut |_| {}).unwrap();
        assert_eq!(change, Change::Shrank);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_named_file_is_an_error_only_when_it_must_exist() {
        let set = FileSet::new(vec![PathBuf::from("/nonexistent/e.jsonl")], true);
        let e = set.paths(true).unwrap_err();
        assert_eq!(e.to_string(), "cannot read /nonexistent/e.jsonl: entity not found");
        assert!(set.paths(false).unwrap().is_empty());
    }
}
