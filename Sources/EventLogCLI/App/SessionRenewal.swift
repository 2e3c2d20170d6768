import Foundation
import ReplicationSupabase

/// A Supabase user's session as `--refresh-token-file` keeps it: the access token given last,
/// and, when the server refuses it, a renewal with the refresh token (Supabase Auth's refresh
/// grant, ``SupabaseSession/refresh(projectURL:apiKey:refreshToken:timeout:)``). Each renewal
/// writes the next refresh token back to its file (a refresh token can be used once) and the new
/// access token to `--access-token-file` when one is given, so that other processes of the user
/// read the renewed session. Renewals are one at a time: two requests refused at once renew once.
///
/// The files written back are written as ``OutputFile`` writes (mode 0600, exclusively created
/// temporary file, renamed over the name) and checked before the refresh grant is sent: a name
/// that is a symbolic link or not a regular file, or a directory where no file can be created,
/// fails the renewal with the refresh token unspent (it can be used once).
actor SessionRenewal {
  private let projectURL: URL
  private let apiKey: String
  private let refreshTokenFile: String
  private let accessTokenFile: String?
  private let environment: String?
  private var current: String?
  /// The renewal in flight: a request refused meanwhile waits for it instead of renewing again
  /// (the refresh token it would send is spent by then).
  private var renewing: Task<String, any Error>?

  /// - Parameters:
  ///   - projectURL: the project's URL.
  ///   - apiKey: its API key.
  ///   - refreshTokenFile: the file whose first line is the refresh token.
  ///   - accessTokenFile: the file to write each renewed access token to, if any (`-` is not).
  ///   - environment: the environment directory, whose files are never written over.
  ///   - initial: the access token to start with (`nil`: renew at the first request).
  init(
    projectURL: URL, apiKey: String, refreshTokenFile: String, accessTokenFile: String?, environment: String?,
    initial: String?
  ) {
    self.projectURL = projectURL
    self.apiKey = apiKey
    self.refreshTokenFile = refreshTokenFile
    self.accessTokenFile = accessTokenFile == "-" ? nil : accessTokenFile
    self.environment = environment
    self.current = initial
  }

  /// The access token to send: the current one, or a renewed one when `refresh` (the server
  /// refused the one given last) or when there is none yet.
  func token(refresh: Bool) async throws -> String? {
    if !refresh, let current { return current }
    if let renewing { return try await renewing.value }
    let task = Task { [projectURL, apiKey, refreshTokenFile, accessTokenFile, environment] in
      guard
        let refreshToken = try RemoteCredentials.firstLine(of: refreshTokenFile, flag: "--refresh-token-file")
      else { throw CommandFailure("'--refresh-token-file': \(refreshTokenFile) holds no refresh token") }
      // Before the grant spends the refresh token: a file that cannot be written back would lose
      // the next one.
      var writes = [(refreshTokenFile, "--refresh-token-file")]
      if let accessTokenFile { writes.append((accessTokenFile, "--access-token-file")) }
      for (file, flag) in writes { try OutputFile.checkWritable(file, flag: flag, environment: environment) }
      let session = try await SupabaseSession.refresh(
        projectURL: projectURL, apiKey: apiKey, refreshToken: refreshToken)
      try OutputFile.replace(
        refreshTokenFile, with: session.refreshToken + "\n", flag: "--refresh-token-file",
        environment: environment)
      if let accessTokenFile {
        try OutputFile.replace(
          accessTokenFile, with: session.accessToken + "\n", flag: "--access-token-file",
          environment: environment)
      }
      return session.accessToken
    }
    renewing = task
    defer { renewing = nil }
    let token = try await task.value
    current = token
    return token
  }
}
