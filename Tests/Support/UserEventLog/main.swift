// An app's own `eventlog` (Docs/CLI.md, "An eventlog for your app"), and the composition root of
// the `User` entity of Tests/UserEntityTests (its files, linked here): the schema, the concrete
// repository, the commands. The tests run it end to end, and the stock `eventlog` on the
// environments it writes.
import EventLog
import EventLogCLI

let commands = UserCommands(repository: { EventSourcedUserRepository(store: $0) })
await EventLogApp(schema: .users, plugins: [commands], remote: .postgres).run()
