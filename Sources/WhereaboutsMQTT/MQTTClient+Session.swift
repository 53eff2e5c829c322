extension MQTTClient {
    /// Runs the client for as long as `body` runs, then disconnects and waits for it to stop.
    ///
    /// ```swift
    /// try await client.withSession { client in
    ///     for await event in client.events {
    ///         if case .connected = event { try client.publish(topic: "hello", payload: Array("hi".utf8)) }
    ///     }
    /// }
    /// ```
    ///
    /// `body` learns about the connection from ``events`` (and receives on ``messages``): nothing to poll. Both
    /// sequences end when the client stops, so a `body` that reads them to the end returns when the client has
    /// stopped for good. Throws what ``run()`` threw (a refused connection, say) once `body` is done; an error
    /// thrown by `body` comes first and disconnects the client.
    public func withSession<Result: Sendable>(
        _ body: (MQTTClient) async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.run() }
            let result: Result
            do {
                result = try await body(self)
            } catch {
                disconnect()
                try? await group.waitForAll()  // the body's error is the one to report
                throw error
            }
            disconnect()
            try await group.waitForAll()
            return result
        }
    }
}
