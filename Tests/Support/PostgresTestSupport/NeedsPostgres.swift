import Foundation
import Testing

extension Trait where Self == ConditionTrait {
  /// Runs the suite only where PostgreSQL's server binaries are installed, and says loudly on
  /// standard error when they are not. `bash .ci/setup` installs them, so CI and a fresh machine
  /// run every such test; only a machine without any PostgreSQL skips them.
  public static var needsPostgres: Self {
    .enabled("needs the PostgreSQL server binaries (initdb); bash .ci/setup installs them") {
      guard let reason = PostgresTestServer.unavailableReason else { return true }
      FileHandle.standardError.write(Data("\n*** SKIPPING POSTGRESQL TESTS: \(reason) ***\n\n".utf8))
      return false
    }
  }
}
