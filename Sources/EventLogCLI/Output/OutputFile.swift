import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc  // open, rename, signal
#elseif canImport(Darwin)
  import Darwin
#endif

/// A file a command writes whole or not at all (`export --output FILE`, and the renewed tokens
/// `--refresh-token-file` writes back): written to a private temporary file beside it, flushed to
/// disk, then renamed over the name.
///
/// - The name must be absent or a regular file: a symbolic link, a FIFO, a device (such as
///   `/dev/stdout`) or a directory is refused, and so is a file of the environment itself
///   (its `data.mdb` or `lock.mdb`, under any name or link). Errors name the option that gave
///   the name.
/// - The temporary file is `.NAME.partial-UUID`, created exclusively (`O_EXCL`, `O_NOFOLLOW`)
///   with mode 0600, so nothing planted at its name is followed, and nobody else can read it.
/// - A failed write, an error, or an interrupt (SIGINT, SIGTERM, SIGHUP) removes it; only a kill
///   that runs no code (SIGKILL) can leave it behind.
///
/// Foundation has no exclusive create that returns a handle, nor a rename over an existing file
/// on Linux (`replaceItemAt` traps there), so this type makes the two POSIX calls itself.
final class OutputFile {
  /// The name written to.
  let path: String
  /// The option that named ``path`` (`--output`), for the errors.
  let flag: String
  /// The environment directory, whose files are refused; `nil` when there is none.
  let environment: String?
  /// The temporary file, renamed to ``path`` by ``commit()``.
  let temporary: String
  private let handle: FileHandle
  private var finished = false

  /// Checks `path` and creates the temporary file.
  /// - Parameters:
  ///   - path: the name to write to, once committed.
  ///   - flag: the option that named it (`--output`), for the errors.
  ///   - environment: the environment directory, whose files are refused; `nil` for none.
  /// - Throws: ``CommandFailure`` naming the flag, the path and why it is refused or cannot be
  ///   created.
  init(path: String, flag: String, environment: String?) throws {
    self.path = path
    self.flag = flag
    self.environment = environment
    try Self.checkTarget(path, flag: flag, environment: environment)
    let url = URL(fileURLWithPath: path)
    let directory = url.deletingLastPathComponent().path
    temporary = directory + "/." + url.lastPathComponent + ".partial-" + UUID().uuidString
    // Registered before it exists, so that no interrupt finds the file without its clean-up.
    InterruptCleanup.shared.register(temporary)
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      let reason = SystemErrorText.reason(posixCode: Int(errno))
      InterruptCleanup.shared.finish(temporary) {}
      throw CommandFailure("'\(flag)': cannot create '\(path)': \(reason)")
    }
    handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
  }

  /// Writes `text` to `path` whole (``init(path:flag:environment:)``, ``write(_:)``,
  /// ``commit()``).
  /// - Throws: ``CommandFailure`` naming the flag and the path; `path` is then unchanged.
  static func replace(_ path: String, with text: String, flag: String, environment: String?) throws {
    let file = try OutputFile(path: path, flag: flag, environment: environment)
    try file.write(text)
    try file.commit()
  }

  /// Whether `path` could be written: the checks of ``init(path:flag:environment:)``, and its
  /// temporary file created and removed again. For a caller that must know before it does
  /// something it cannot undo (spending a refresh token).
  /// - Throws: ``CommandFailure`` naming the flag, the path and why it is refused or cannot be
  ///   created.
  static func checkWritable(_ path: String, flag: String, environment: String?) throws {
    try OutputFile(path: path, flag: flag, environment: environment).abandon()
  }

  /// Refuses a name that is not absent or a regular file, or that is a file of `environment`.
  static func checkTarget(_ path: String, flag: String, environment: String?) throws {
    let attributes: [FileAttributeKey: Any]
    do {
      attributes = try FileManager.default.attributesOfItem(atPath: path)  // lstat: links are not followed
    } catch {
      let code = (error as NSError).code
      let posix = SystemErrorText.posixCode(of: error)
      if code == NSFileNoSuchFileError || code == NSFileReadNoSuchFileError || posix == Int(ENOENT) {
        return  // absent: created by commit(); a missing directory fails the create
      }
      throw CommandFailure("'\(flag)': cannot inspect '\(path)': \(SystemErrorText.reason(of: error))")
    }
    let type = attributes[.type] as? FileAttributeType
    guard type == .typeRegular else {
      let kind: String
      switch type {
      case .typeSymbolicLink?: kind = "a symbolic link"
      case .typeDirectory?: kind = "a directory"
      case .typeCharacterSpecial?, .typeBlockSpecial?: kind = "a device"
      case .typeSocket?: kind = "a socket"
      default: kind = "not a regular file (a FIFO?)"
      }
      let instead = flag == "--output" ? ", or - for standard output" : ""
      throw CommandFailure(
        "'\(flag)': refusing '\(path)': it is \(kind); give a regular file's name\(instead)")
    }
    guard let environment else { return }
    for name in ["data.mdb", "lock.mdb"] {
      let own = environment + "/" + name
      guard let ownAttributes = try? FileManager.default.attributesOfItem(atPath: own) else { continue }
      if Self.identity(attributes) == Self.identity(ownAttributes) {
        throw CommandFailure("'\(flag)': refusing '\(path)': it is the environment's own \(own)")
      }
    }
  }

  /// The device and inode numbers of a file.
  private static func identity(_ attributes: [FileAttributeKey: Any]) -> [UInt64] {
    [.systemNumber, .systemFileNumber].map { (attributes[$0] as? NSNumber)?.uint64Value ?? 0 }
  }

  /// Appends `text`.
  /// - Throws: ``CommandFailure`` naming the path and the system's reason; the temporary file is
  ///   removed.
  func write(_ text: String) throws {
    do {
      try handle.write(contentsOf: Data(text.utf8))
    } catch {
      abandon()
      throw CommandFailure("'\(flag)': cannot write '\(path)': \(SystemErrorText.reason(of: error))")
    }
  }

  /// Flushes the file to disk and renames it over ``path``.
  /// - Throws: ``CommandFailure``; the temporary file is removed.
  func commit() throws {
    do {
      try handle.synchronize()
      try handle.close()
    } catch {
      abandon()
      throw CommandFailure("'\(flag)': cannot write '\(path)': \(SystemErrorText.reason(of: error))")
    }
    // Checked again just before the rename: the name may have changed since it was checked.
    do {
      try Self.checkTarget(path, flag: flag, environment: environment)
    } catch {
      abandon()
      throw error
    }
    let renamed = InterruptCleanup.shared.finish(temporary) { rename(temporary, path) == 0 ? 0 : errno }
    finished = true
    if renamed != 0 {
      try? FileManager.default.removeItem(atPath: temporary)
      throw CommandFailure(
        "'\(flag)': cannot write '\(path)': \(SystemErrorText.reason(posixCode: Int(renamed)))")
    }
  }

  /// Removes the temporary file.
  func abandon() {
    guard !finished else { return }
    finished = true
    try? handle.close()
    InterruptCleanup.shared.finish(temporary) { try? FileManager.default.removeItem(atPath: temporary) }
  }

  deinit { abandon() }
}

/// Removes registered temporary files when the process is interrupted (SIGINT, SIGTERM, SIGHUP),
/// then exits with 128 + the signal's number, as a shell reports a process the signal ended.
final class InterruptCleanup: Sendable {
  static let shared = InterruptCleanup()

  private struct State {
    var paths: Set<String> = []
    var sources: [any DispatchSourceSignal] = []
    /// Each signal's disposition before ``register(_:)`` caught it, given back once no path is
    /// registered: a command that catches the signals itself (`replicate --watch`) gets them back.
    var previous: [(Int32, sighandler_t?)] = []
  }

  private let state = Mutex(State())
  private static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]
  private let queue = DispatchQueue(label: "EventLogCLI.interrupt")

  /// Removes `path` if the process is interrupted before ``finish(_:_:)``. The first call
  /// returns once the signal sources are registered, so that an interrupt from then on is seen.
  func register(_ path: String) {
    state.withLock { state in
      state.paths.insert(path)
      guard state.sources.isEmpty else { return }
      let registered = DispatchSemaphore(value: 0)
      for number in Self.signals {
        // The signal's default action (ending the process at once) must be off for the source
        // to see it.
        state.previous.append((number, signal(number, SIG_IGN)))
        let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
        source.setEventHandler { [self] in interrupted(by: number) }
        source.setRegistrationHandler { registered.signal() }
        source.resume()
        state.sources.append(source)
      }
      // Bounded: a source that does not register within a second only narrows the window.
      for _ in Self.signals { _ = registered.wait(timeout: .now() + .seconds(1)) }
    }
  }

  /// Runs `body` (the rename or the removal) and forgets `path`, with no interrupt in between;
  /// with no path left, gives the signals back their earlier dispositions.
  @discardableResult
  func finish<R>(_ path: String, _ body: () -> R) -> R {
    state.withLock { state in
      defer {
        state.paths.remove(path)
        if state.paths.isEmpty {
          for source in state.sources { source.cancel() }
          for (number, handler) in state.previous { signal(number, handler) }
          state.sources = []
          state.previous = []
        }
      }
      return body()
    }
  }

  private func interrupted(by number: Int32) {
    state.withLock { state in
      // A signal that came as the last path was finished: the earlier dispositions are back.
      guard !state.sources.isEmpty else { return }
      for path in state.paths { try? FileManager.default.removeItem(atPath: path) }
      state.paths.removeAll()
      // End as a shell reports a process ended by the signal (128 + its number). Re-raising it
      // is not reliable: a process started with the signal blocked (as some parents start
      // their children) would keep it pending forever. Exiting under the lock means no rename
      // can slip in before the end.
      exit(128 + number)
    }
  }
}
