// The composition root: the only place that creates the concrete store, sources and repositories.
import EventLog
import EventLogCLI
import Foundation
import ReplicationPostgres
import ReplicationSupabase
import RestaurantBooking

// First, before the runtime opens anything: closed standard streams must fail as closed.
StandardStreams.reserveClosedDescriptors()

let dependencies = Dependencies(
  openStore: { path, options in
    try EventStore(
      path: path, projections: RestaurantBookingSchema.projections,
      admission: RestaurantBookingSchema.admission,
      options: options)
  },
  eventTypes: RestaurantBookingSchema.eventTypes,
  streamNames: StreamNames(
    displayed: RestaurantBookingStreams.displayName(of:), stored: RestaurantBookingStreams.stream(named:)),
  admission: RestaurantBookingSchema.admission,
  isReplicated: RestaurantBookingSchema.isReplicated,
  replicatedStreamPrefixes: RestaurantBookingSchema.replicatedStreamPrefixes,
  latestServerSchema: ServerSchema.latestVersion,
  replicationTransport: { remote in
    // A Supabase project's https:// URL: its API with the user's session; else libpq.
    if SupabaseTransport.handles(remote.url) {
      guard let url = URL(string: remote.url) else {
        throw SupabaseError.invalidURL(reason: "it is not a valid URL")
      }
      return try SupabaseTransport(
        projectURL: url, apiKey: remote.apiKey ?? "", accessToken: remote.accessToken)
    }
    return try PostgresTransport(url: remote.url, allowUnencrypted: remote.allowUnencrypted)
  },
  initializeRemote: { remote, prefixes in
    let transport = try PostgresTransport(url: remote.url, allowUnencrypted: remote.allowUnencrypted)
    defer { transport.close() }
    let report = try await transport.initializeSchema(replicatedStreamPrefixes: prefixes)
    return RemoteInitResult(
      server: transport.server, from: report.from, to: report.to, api: report.api, warnings: report.warnings)
  },
  restaurantSource: { from, apiKey in
    if SupabaseRestaurantSource.isURL(from) {
      guard let url = URL(string: from) else {
        throw CommandFailure("'--from': '\(from)' is not a valid URL")
      }
      return SupabaseRestaurantSource(baseURL: url, apiKey: apiKey ?? "")
    }
    return FileRestaurantSource(path: from)
  },
  restaurantRepository: { store, source in
    EventSourcedRestaurantRepository(store: store, source: source, origin: "cli")
  },
  bookingRepository: { store in EventSourcedBookingRepository(store: store, origin: "cli") }
)

let status = await EventLogProgram.main(
  arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment,
  dependencies: dependencies)
exit(status)
