// The composition root of the shipped `eventlog`: the example app's schema, its commands and
// replication through PostgreSQL or a Supabase project's API (by the URL's scheme). An app's own
// `eventlog` is these lines with its schema and plug-in.
import EventLogCLI
import RestaurantBooking
import RestaurantBookingCLI

await EventLogApp(
  schema: .restaurantBooking, plugins: [RestaurantBookingCommands()], remote: .postgresAndSupabase
).run()
