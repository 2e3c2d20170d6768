// An app's own `eventlog` (Docs/CLI.md, "An eventlog for your app"): the `User` entity of
// Tests/UserEntityTests (its two files, linked here) with its schema and commands. The tests run
// it end to end, and the stock `eventlog` on the environments it writes.
import EventLogCLI

await EventLogApp(schema: .users, plugins: [UserCommands()], remote: .postgres).run()
