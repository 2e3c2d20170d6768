import Foundation

#if canImport(Glibc)
  import Glibc  // open, fstat, geteuid
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads a file that holds a secret (`--access-token-file`), but only one that nobody else can
/// change: whoever can write it chooses whose session the command runs as, and so whose log on
/// the server this device's events go to.
///
/// The file is opened first (a symbolic link is followed) and the file opened is checked with
/// `fstat`, so that the checks and the read concern the same file:
/// - a regular file or a FIFO must not be writable by its group or others, and must belong to
///   the user running the command or to root;
/// - the directory that holds it (after symbolic links) must not be writable by group or others
///   unless it is sticky (as `/tmp`), and must belong to that user or root: else anyone who may
///   write there could put another file in its place.
///
/// Standard input (`-`) is checked as the file it is (a pipe passes: only its writer holds it);
/// a terminal or another device is read as it is.
enum SecretFile {
  /// The bytes of `path` (`-`: standard input), at most `maximumBytes`.
  /// - Parameters:
  ///   - path: the file as named on the command line.
  ///   - flag: the option that named it, for the error.
  ///   - maximumBytes: the most bytes accepted.
  /// - Returns: every byte of the file.
  /// - Throws: ``CommandFailure`` naming the flag, the path and the mode or owner that make it
  ///   unsafe; ``InputError`` when it cannot be read.
  static func read(_ path: String, flag: String, maximumBytes: Int) throws -> Data {
    guard path != "-" else {
      try check(descriptor: 0, path: path, flag: flag)
      return try InputReader.read(path, maximumBytes: maximumBytes)
    }
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
      throw InputError(name: path, reason: "it is a directory")
    }
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
    guard descriptor >= 0 else {
      let code = Int(errno)
      throw InputError(
        name: path, reason: code == Int(ENOENT) ? "no such file" : SystemErrorText.reason(posixCode: code))
    }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    try check(descriptor: descriptor, path: path, flag: flag)
    try checkDirectory(of: path, flag: flag)
    return try InputReader.read(handle, name: path, maximumBytes: maximumBytes)
  }

  /// Refuses the open file when its group or others may write it, or another user owns it.
  private static func check(descriptor: Int32, path: String, flag: String) throws {
    var status = stat()
    guard fstat(descriptor, &status) == 0 else {
      throw InputError(name: path, reason: SystemErrorText.reason(posixCode: Int(errno)))
    }
    let type = status.st_mode & S_IFMT
    guard type == S_IFREG || type == S_IFIFO else { return }
    let shown = path == "-" ? "standard input" : "'\(path)'"
    if status.st_mode & (S_IWGRP | S_IWOTH) != 0 {
      throw CommandFailure(
        "'\(flag)': refusing \(shown): its group or others can write it (mode \(mode(status.st_mode))), and so "
          + "choose whose session this runs as; make it its owner's alone (chmod 600)")
    }
    if status.st_uid != geteuid() && status.st_uid != 0 {
      throw CommandFailure(
        "'\(flag)': refusing \(shown): it belongs to user \(status.st_uid), not to the user running eventlog "
          + "(\(geteuid())) or root")
    }
  }

  /// Refuses a file whose directory others may write (unless sticky) or another user owns.
  private static func checkDirectory(of path: String, flag: String) throws {
    let directory = URL(fileURLWithPath: path).resolvingSymlinksInPath().deletingLastPathComponent().path
    var status = stat()
    guard stat(directory, &status) == 0 else { return }  // the file was opened: its directory exists
    let shown = "'\(path)'"
    if status.st_mode & (S_IWGRP | S_IWOTH) != 0 && status.st_mode & S_ISVTX == 0 {
      throw CommandFailure(
        "'\(flag)': refusing \(shown): its directory '\(directory)' can be written by its group or others "
          + "(mode \(mode(status.st_mode))), who could put another file in its place")
    }
    if status.st_uid != geteuid() && status.st_uid != 0 {
      throw CommandFailure(
        "'\(flag)': refusing \(shown): its directory '\(directory)' belongs to user \(status.st_uid), not to "
          + "the user running eventlog (\(geteuid())) or root")
    }
  }

  /// `0644`, `1777`: the permission bits in octal.
  private static func mode(_ mode: mode_t) -> String {
    let bits = String(mode & 0o7777, radix: 8)
    return String(repeating: "0", count: max(0, 4 - bits.count)) + bits
  }
}
