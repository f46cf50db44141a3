//! The atomic write: whole files or none, no temporary file left behind, and an existing file
//! replaced only when asked.

use camelot_rules::fsio::write_atomic;
use std::io::ErrorKind;

#[test]
fn writes_replaces_only_when_asked_and_leaves_no_temporary_file() {
    let dir = std::env::temp_dir().join(format!("camelot-rules-fsio-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("nested").join("state.json");
    write_atomic(&path, b"first", false).expect("creates the directory and the file");
    assert_eq!(std::fs::read(&path).unwrap(), b"first");

    let e = write_atomic(&path, b"second", false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(&path).unwrap(), b"first", "a refused write changes nothing");

    write_atomic(&path, b"third", true).expect("replaces when asked");
    assert_eq!(std::fs::read(&path).unwrap(), b"third");

    let names: Vec<_> = std::fs::read_dir(dir.join("nested")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("state.json")], "no temporary file is left");

    // A path whose directory cannot be made fails with an error and writes nothing.
    let blocked = path.join("below-a-file");
    assert!(write_atomic(&blocked, b"x", true).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
