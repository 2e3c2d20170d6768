import CLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The names of the two files LMDB keeps in an environment directory.
let environmentFileNames = ["data.mdb", "lock.mdb"]

extension Environment {
  /// Refuses an environment that is not what it claims to be, before LMDB opens (and writes) its
  /// files: a directory that group or others can write to (anyone who can write there can put a
  /// link in place of a file, as ssh reasons about `~/.ssh`), and a `data.mdb` or `lock.mdb`
  /// that is a symbolic link, not a regular file, or a regular file with other hard links.
  ///
  /// LMDB opens both files by name with `O_CREAT` and writes the lock file at once, even for a
  /// read-only open: a linked `lock.mdb` would overwrite its target with lock data, and two
  /// environments sharing one `data.mdb` would each have their own writer lock and corrupt it.
  /// Checking the directory first makes the file checks hold until LMDB opens the files: nobody
  /// else can replace them.
  /// - Throws: ``LMDBError`` whose explanation names the path and the reason; nothing when the
  ///   directory does not exist (LMDB then reports it).
  static func checkFiles(at path: String) throws(LMDBError) {
    var status = stat()
    guard stat(path, &status) == 0 else { return }
    guard status.st_mode & S_IFMT == S_IFDIR else {
      throw LMDBError(
        code: .wrongFileType, operation: "stat", context: path,
        explanation: "'\(path)' is \(kind(of: status.st_mode)), not an environment directory")
    }
    let loose = status.st_mode & 0o022
    if loose != 0 {
      let who = loose == 0o022 ? "group and others" : loose == 0o020 ? "its group" : "others"
      throw LMDBError(
        code: .unsafePermissions, operation: "stat", context: path,
        explanation:
          "refusing the environment '\(path)': \(who) can write to the directory (mode \(octal(status.st_mode & 0o7777))); "
          + "make it private, for example with chmod 700")
    }
    for name in environmentFileNames {
      let file = path + "/" + name
      guard lstat(file, &status) == 0 else {
        if errno == ENOENT { continue }  // LMDB creates it
        throw LMDBError(code: .init(rawValue: errno), operation: "lstat", context: file)
      }
      try checkRegularFile(status, file)
    }
  }

  /// Throws unless `status` is that of a regular file with one link.
  private static func checkRegularFile(_ status: stat, _ file: String) throws(LMDBError) {
    switch status.st_mode & S_IFMT {
    case S_IFREG:
      guard status.st_nlink <= 1 else {
        throw LMDBError(
          code: .tooManyLinks, operation: "lstat", context: file,
          explanation:
            "refusing '\(file)': it has \(status.st_nlink) hard links, so another environment may share it")
      }
    case S_IFLNK:
      throw LMDBError(
        code: .symbolicLink, operation: "lstat", context: file,
        explanation: "refusing '\(file)': it is a symbolic link; an environment's files must be regular files"
      )
    default:
      throw LMDBError(
        code: .wrongFileType, operation: "lstat", context: file,
        explanation: "refusing '\(file)': it is \(kind(of: status.st_mode)), not a regular file")
    }
  }

  /// After LMDB opened the files: the data file it holds open is still the one checked (a
  /// regular file with one link, at its name), so it was not replaced in between.
  static func checkOpenDataFile(_ env: OpaquePointer, path: String) throws(LMDBError) {
    var descriptor: mdb_filehandle_t = -1
    var open = stat()
    var named = stat()
    let file = path + "/data.mdb"
    guard mdb_env_get_fd(env, &descriptor) == 0, fstat(descriptor, &open) == 0 else { return }
    try checkRegularFile(open, file)
    guard lstat(file, &named) == 0, named.st_dev == open.st_dev, named.st_ino == open.st_ino else {
      throw LMDBError(
        code: .wrongFileType, operation: "fstat", context: file,
        explanation: "refusing '\(file)': it was replaced while the environment was being opened")
    }
  }

  /// `a FIFO`, `a directory`, … for a file mode.
  static func kind(of mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFREG: "a regular file"
    case S_IFDIR: "a directory"
    case S_IFLNK: "a symbolic link"
    case S_IFIFO: "a FIFO"
    case S_IFSOCK: "a socket"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    default: "a file of unknown type"
    }
  }

  private static func octal(_ mode: mode_t) -> String {
    let digits = String(mode, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }
}
