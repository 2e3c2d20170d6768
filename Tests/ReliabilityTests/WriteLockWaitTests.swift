import Foundation
import TestKit
import Testing

extension Reliability {
  /// Issue 14, item 7: waiting for the write lock is visible.
  @Suite struct WriteLockWait {
    @Test(
      "a command waiting over a second for the write lock of a stopped writer says so, keeps waiting, then finishes"
    )
    func stoppedWriter() async throws {
      let directory = TemporaryDirectory()
      let path = directory.environment()
      let first = try directory.file("a.json", Data(Self.body(["Pasta Palace"]).utf8))
      let second = try directory.file("b.json", Data(Self.body(["Pasta Palace", "Sushi Sensation"]).utf8))
      let sync = try Child(
        Binaries.eventlog, ["--db", path, "restaurants", "sync", "--from", first], in: directory.url)
      try #require(await sync.wait(timeout: .seconds(30)) == .exited(0), "\(sync.stderr)")

      // A writer inside its write transaction, then stopped (as Ctrl-Z would): it holds the lock.
      let holder = try Child(Binaries.stress, ["hold-writer", "--db", path], in: directory.url)
      try #require(
        await holder.waitForLine(prefix: "holding", timeout: .seconds(30)) != nil, "\(holder.stderr)")
      #expect(holder.send(SIGSTOP))

      let started = ContinuousClock.now
      let waiter = try Child(
        Binaries.eventlog, ["--db", path, "restaurants", "sync", "--from", second], in: directory.url)
      var noticed: Duration?
      while ContinuousClock.now - started < .seconds(20), waiter.process.isRunning {
        if waiter.stderr.contains("waiting for the write lock") {
          noticed = ContinuousClock.now - started
          break
        }
        try await Task.sleep(for: .milliseconds(20))
      }
      let notice = try #require(noticed, "no notice within 20 s: \(waiter.stderr)")
      #expect(notice >= .seconds(1), "the notice came after \(notice), before the second had passed")
      #expect(waiter.process.isRunning, "the command must keep waiting")
      #expect(
        waiter.stderr
          == "waiting for the write lock of '\(path)': another process holds it (perhaps a stopped one); still waiting…\n"
      )

      // The writer ends (a stopped process can be killed): the lock is free, the command finishes.
      holder.kill()
      #expect(await holder.wait(timeout: .seconds(10)) == .signaled(SIGKILL))
      #expect(await waiter.wait(timeout: .seconds(30)) == .exited(0), "\(waiter.stderr)")
      #expect(waiter.lines == ["added 1, updated 0, removed 0, unchanged 1"])
    }

    /// A PostgREST body of restaurants with these names.
    static func body(_ names: [String]) -> String {
      let rows = names.enumerated().map { index, name in
        #"{"id":"00000000-0000-4000-8000-00000000000\#(index + 1)","name":"\#(name)","cuisine":"Any"}"#
      }
      return "[" + rows.joined(separator: ",") + "]"
    }
  }
}
