import Foundation

/// The system's reason for a failed file operation, in words: `No space left on device`, not
/// `NSCocoaErrorDomain error 256`.
enum SystemErrorText {
  /// The POSIX reason inside a Foundation error (its underlying `NSPOSIXErrorDomain` error),
  /// else the error's own description.
  static func reason(of error: any Error) -> String {
    if let code = posixCode(of: error) { return reason(posixCode: code) }
    return (error as NSError).localizedDescription
  }

  /// The POSIX error code inside a Foundation error, if there is one.
  static func posixCode(of error: any Error) -> Int? {
    let error = error as NSError
    if error.domain == NSPOSIXErrorDomain { return error.code }
    if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError,
      underlying.domain == NSPOSIXErrorDomain
    {
      return underlying.code
    }
    return nil
  }

  /// `strerror`'s text for a POSIX code, through Foundation.
  static func reason(posixCode code: Int) -> String {
    NSError(domain: NSPOSIXErrorDomain, code: code).localizedFailureReason ?? "error \(code)"
  }
}
