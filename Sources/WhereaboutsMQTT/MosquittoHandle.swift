import CMosquitto
import Glibc
import Synchronization

/// A `struct mosquitto *`, and the only place in the module that calls libmosquitto.
///
/// The pointer is kept as its address so the value is `Sendable`: libmosquitto documents every function
/// except `mosquitto_lib_init` as thread-safe ("Topic: Threads" in mosquitto.h), and ``MQTTClient``
/// guarantees the lifetime: the handle is destroyed in the client's `deinit`, which cannot run while
/// the loop thread or a caller of `publish`/`subscribe` holds the client.
///
/// Callbacks are formed in `nonisolated` functions (an inline closure in main-actor code would get a
/// runtime isolation check and trap on libmosquitto's thread). They reach ``MQTTClientCore`` through the
/// `void *userdata`, copy what they need into Swift values and hand it over without blocking.
struct MosquittoHandle: Sendable {
    let address: UInt

    private var pointer: OpaquePointer? { OpaquePointer(bitPattern: address) }

    /// `mosquitto_lib_init`'s result. A `static let` is initialized exactly once, on first use, under
    /// `swift_once`: the "once" the library needs, which (unlike `Mutex` on Linux) ThreadSanitizer can see.
    private static let libraryInitialization: Int32 = mosquitto_lib_init()

    /// Calls `mosquitto_lib_init` once per process; it is the one libmosquitto call that is not thread-safe.
    static func initializeLibrary() {
        _ = libraryInitialization
    }

    /// Creates and configures a handle for `configuration` whose callbacks feed `core`.
    ///
    /// The corresponding C functions are `mosquitto_new`, `mosquitto_int_option`, `mosquitto_username_pw_set`,
    /// `mosquitto_will_set_v5`, `mosquitto_tls_set`, `mosquitto_tls_insecure_set` and `mosquitto_tls_opts_set`.
    static func make(_ configuration: MQTTClientConfiguration, core: MQTTClientCore) throws(MQTTError)
        -> MosquittoHandle
    {
        initializeLibrary()
        let userdata = Unmanaged.passUnretained(core).toOpaque()
        guard let mosq = mosquitto_new(configuration.clientID, configuration.cleanStart, userdata) else {
            throw errno == ENOMEM ? .noMemory : .invalidArgument
        }
        let handle = MosquittoHandle(address: UInt(bitPattern: mosq))
        do {
            try handle.configure(configuration)
        } catch {
            mosquitto_destroy(mosq)
            throw error
        }
        installCallbacks(mosq)
        return handle
    }

    /// Drops every message libmosquitto holds (queued, in flight, or due to be re-sent after a reconnect) by making
    /// the handle afresh in place, with the same settings and callbacks. Loop thread only, between connections:
    /// nothing else may use the handle meanwhile (``MQTTClientCore/Phase``). The corresponding C function is
    /// `mosquitto_reinitialise`.
    func forgetMessages(_ configuration: MQTTClientConfiguration, core: MQTTClientCore) throws(MQTTError) {
        let userdata = Unmanaged.passUnretained(core).toOpaque()
        try check(mosquitto_reinitialise(pointer, configuration.clientID, configuration.cleanStart, userdata))
        try configure(configuration)
        if let pointer { Self.installCallbacks(pointer) }
    }

    private func configure(_ configuration: MQTTClientConfiguration) throws(MQTTError) {
        try check(mosquitto_int_option(pointer, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5))
        try check(mosquitto_int_option(pointer, MOSQ_OPT_TCP_NODELAY, 1))
        // We drive mosquitto_loop from our own thread: libmosquitto must take its locks and leave the
        // writing to that thread (publish only wakes it through its socket pair).
        try check(mosquitto_threaded_set(pointer, true))
        if configuration.username != nil || configuration.password != nil {
            try check(mosquitto_username_pw_set(pointer, configuration.username, configuration.password))
        }
        if let will = configuration.will {
            guard will.payload.count <= Int(UInt16.max) else { throw .payloadTooLarge }
            try check(
                will.payload.withUnsafeBytes { bytes in
                    mosquitto_will_set_v5(
                        pointer, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos.rawValue, will.retain, nil
                    )
                }
            )
        }
        if let tls = configuration.tls {
            // Without a CA file, trust the system store.
            let caPath: String? = tls.caFile == nil ? "/etc/ssl/certs" : nil
            try check(mosquitto_tls_set(pointer, tls.caFile, caPath, tls.certificateFile, tls.keyFile, nil))
            if tls.insecure {
                // Host name check off, and SSL_VERIFY_NONE (0) so an unknown CA is accepted too.
                try check(mosquitto_tls_insecure_set(pointer, true))
                try check(mosquitto_tls_opts_set(pointer, 0, nil, nil))
            }
        }
    }

    /// Frees the handle. The loop thread must have stopped. The corresponding C function is `mosquitto_destroy`.
    func destroy() {
        mosquitto_destroy(pointer)
    }

    // MARK: - Connection (loop thread only)

    /// Starts a connection: TCP (and TLS) connect, then CONNECT with clean start as configured, the session expiry
    /// interval property, and the receive maximum and maximum packet size properties when given. Returns the failure, if any, with `errno`'s text for system errors.
    ///
    /// `mosquitto_reconnect` would drop the CONNECT properties (it sends none), losing the session
    /// expiry, so every attempt goes through `mosquitto_connect_bind_v5`.
    func connect(
        host: String, port: Int, keepAliveSeconds: Int32, sessionExpirySeconds: UInt32, receiveMaximum: UInt16?,
        maximumPacketSize: UInt32?
    ) -> MQTTConnectionFailure? {
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        var added = mosquitto_property_add_int32(
            &properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), sessionExpirySeconds
        )
        if added == MOSQ_ERR_SUCCESS.rawValue, let receiveMaximum {
            added = mosquitto_property_add_int16(
                &properties, Int32(MQTT_PROP_RECEIVE_MAXIMUM.rawValue), max(receiveMaximum, 1))
        }
        if added == MOSQ_ERR_SUCCESS.rawValue, let maximumPacketSize {
            // 0 is a protocol error in CONNECT; the smallest useful packet is a few bytes anyway.
            added = mosquitto_property_add_int32(
                &properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), max(maximumPacketSize, 1))
        }
        guard added == MOSQ_ERR_SUCCESS.rawValue else { return .failed(MQTTError(rawValue: added), detail: nil) }
        let status = mosquitto_connect_bind_v5(pointer, host, Int32(clamping: port), keepAliveSeconds, nil, properties)
        guard status != MOSQ_ERR_SUCCESS.rawValue else { return nil }
        let detail = status == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : nil
        return .failed(MQTTError(rawValue: status), detail: detail)
    }

    /// Runs one round of network I/O, waiting up to `timeoutMilliseconds`; returns the error that ended the
    /// connection, if any. The corresponding C function is `mosquitto_loop`.
    ///
    /// The round's writes leave corked (`TCP_CORK`, cleared when the round ends, which sends what is held): a round
    /// writes every packet queued since the last one, each with a `write` of its own, and uncorked each went out as a
    /// segment of its own.
    func loop(timeoutMilliseconds: Int32) -> MQTTError? {
        cork(true)
        let status = mosquitto_loop(pointer, timeoutMilliseconds, 1)
        cork(false)
        return status == MOSQ_ERR_SUCCESS.rawValue ? nil : MQTTError(rawValue: status)
    }

    /// Sets or clears `TCP_CORK` on the connection's socket, if it has one and it is TCP (a Unix socket refuses the
    /// option, which changes nothing).
    private func cork(_ on: Bool) {
        let descriptor = mosquitto_socket(pointer)
        guard descriptor >= 0 else { return }
        var value: Int32 = on ? 1 : 0
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Queues DISCONNECT (reason 0, so the broker discards the will). The corresponding C function is
    /// `mosquitto_disconnect_v5`.
    func disconnect() {
        _ = mosquitto_disconnect_v5(pointer, 0, nil)
    }

    /// Whether the handle has a socket open. The corresponding C function is `mosquitto_socket`.
    var hasSocket: Bool {
        mosquitto_socket(pointer) >= 0
    }

    /// Shuts the socket down without DISCONNECT, as a crash or a pulled cable would; the broker then
    /// publishes the will. The descriptor stays open until the next connect or `destroy`.
    func dropSocket() {
        let descriptor = mosquitto_socket(pointer)
        if descriptor >= 0 {
            _ = shutdown(descriptor, Int32(SHUT_RDWR))
        }
    }

    // MARK: - Requests (any thread, while connected)

    /// Queues a PUBLISH and returns its message id. The corresponding C function is `mosquitto_publish_v5`.
    func publish(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, expirySeconds: UInt32?)
        throws(MQTTError) -> Int
    {
        guard payload.count <= Int(Int32.max) else { throw .payloadTooLarge }
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if let expirySeconds {
            try check(
                mosquitto_property_add_int32(
                    &properties, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expirySeconds
                )
            )
        }
        var messageID: Int32 = 0
        let status = payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(
                pointer, &messageID, topic, Int32(bytes.count), bytes.baseAddress, qos.rawValue, retain, properties
            )
        }
        try check(status)
        return Int(messageID)
    }

    /// Queues a SUBSCRIBE and returns its message id. With `onlyNewRetained`, the broker sends retained
    /// messages only if it did not already have the subscription. The corresponding C function is
    /// `mosquitto_subscribe_v5`.
    func subscribe(_ filter: String, qos: MQTTQoS, onlyNewRetained: Bool, noLocal: Bool = false) throws(MQTTError)
        -> Int
    {
        var messageID: Int32 = 0
        var options = onlyNewRetained ? Int32(MQTT_SUB_OPT_SEND_RETAIN_NEW.rawValue) : 0
        if noLocal { options |= Int32(MQTT_SUB_OPT_NO_LOCAL.rawValue) }
        try check(mosquitto_subscribe_v5(pointer, &messageID, filter, qos.rawValue, options, nil))
        return Int(messageID)
    }

    /// Queues an UNSUBSCRIBE and returns its message id. The corresponding C function is `mosquitto_unsubscribe`.
    func unsubscribe(_ filter: String) throws(MQTTError) -> Int {
        var messageID: Int32 = 0
        try check(mosquitto_unsubscribe(pointer, &messageID, filter))
        return Int(messageID)
    }

    // MARK: - Pure helpers

    /// Throws unless `filter` is a valid subscription filter. The corresponding C function is
    /// `mosquitto_sub_topic_check`.
    static func validateFilter(_ filter: String) throws(MQTTError) {
        try check(mosquitto_sub_topic_check(filter))
    }

    /// `mosquitto_strerror` for a `MOSQ_ERR_*` value.
    static func errorText(_ code: Int32) -> String {
        mosquitto_strerror(code).map { String(cString: $0) } ?? "Unknown error"
    }

    /// `mosquitto_reason_string` for an MQTT v5 reason code.
    static func reasonText(_ code: Int32) -> String {
        mosquitto_reason_string(code).map { String(cString: $0) } ?? "Unknown reason"
    }

    private func check(_ status: Int32) throws(MQTTError) {
        try Self.check(status)
    }

    private static func check(_ status: Int32) throws(MQTTError) {
        guard status == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTError(rawValue: status) }
    }

    // MARK: - Callbacks

    private static func installCallbacks(_ mosq: OpaquePointer) {
        mosquitto_connect_v5_callback_set(mosq, onConnect())
        mosquitto_disconnect_v5_callback_set(mosq, onDisconnect())
        mosquitto_publish_v5_callback_set(mosq, onPublish())
        mosquitto_message_v5_callback_set(mosq, onMessage())
        mosquitto_subscribe_v5_callback_set(mosq, onSubscribe())
        mosquitto_unsubscribe_v5_callback_set(mosq, onUnsubscribe())
        mosquitto_log_callback_set(mosq, onLog())
    }

    private nonisolated static func onConnect()
        -> @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void
    {
        { mosq, userdata, reasonCode, flags, _ in
            guard let core = clientCore(userdata) else { return }
            let handle = MosquittoHandle(address: UInt(bitPattern: mosq))
            core.connectionAnswered(
                reason: MQTTReasonCode(rawValue: UInt8(clamping: reasonCode)), sessionPresent: flags & 1 != 0
            ) { subscription in
                // Subscribing here, in the CONNACK callback, covers every reconnect (mosquitto's own advice).
                (try? handle.subscribe(
                    subscription.filter, qos: subscription.qos, onlyNewRetained: subscription.sentBefore,
                    noLocal: subscription.noLocal
                )) != nil
            }
        }
    }

    private nonisolated static func onDisconnect()
        -> @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, OpaquePointer?) -> Void
    {
        { _, userdata, code, _ in
            guard let core = clientCore(userdata) else { return }
            // libmosquitto passes a MOSQ_ERR_* value for local failures and the DISCONNECT reason code
            // (0x80 and above for errors) when the broker sent one.
            let reason: MQTTDisconnectReason =
                switch code {
                case 0: .requested
                case 0x80...0xFF: .server(MQTTReasonCode(rawValue: UInt8(code)))
                default: .connectionLost(MQTTError(rawValue: code))
                }
            core.connectionEnded(reason)
        }
    }

    private nonisolated static func onPublish()
        -> @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void
    {
        { _, userdata, messageID, reasonCode, _ in
            guard let core = clientCore(userdata) else { return }
            let reason = MQTTReasonCode(rawValue: UInt8(clamping: reasonCode))
            guard core.completed(messageID: Int(messageID), reason: reason) else { return }
            core.events.yield(.acknowledged(messageID: Int(messageID), reason: reason))
        }
    }

    private nonisolated static func onMessage()
        -> @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?, OpaquePointer?)
        -> Void
    {
        { mosq, userdata, message, _ in
            guard let core = clientCore(userdata), let message = message?.pointee, let topic = message.topic else {
                return
            }
            defer {
                // The wait for room may have lasted past the sending deadline: the writes of this round must not go.
                if core.mustCutConnection { MosquittoHandle(address: UInt(bitPattern: mosq)).dropSocket() }
            }
            // payload and topic belong to libmosquitto and are only valid during the callback: copy them, but
            // check the length first, so that an oversized payload costs its limit, not its size.
            var payload: [UInt8] = []
            if let bytes = message.payload, message.payloadlen > 0 {
                let length = min(Int(message.payloadlen), core.payloadLimit.map { $0 + 1 } ?? Int.max)
                payload = Array(UnsafeRawBufferPointer(start: bytes, count: length))
            }
            core.received(
                MQTTMessage(
                    topic: String(cString: topic), payload: payload,
                    qos: MQTTQoS(rawValue: message.qos) ?? .atMostOnce, retain: message.retain
                )
            )
        }
    }

    private nonisolated static func onSubscribe()
        -> @convention(c) (
            OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, UnsafePointer<Int32>?, OpaquePointer?
        ) -> Void
    {
        { _, userdata, messageID, count, granted, _ in
            guard let core = clientCore(userdata) else { return }
            var results: [MQTTReasonCode] = []
            if let granted, count > 0 {
                results = UnsafeBufferPointer(start: granted, count: Int(count)).map {
                    MQTTReasonCode(rawValue: UInt8(clamping: $0))
                }
            }
            core.events.yield(.subscribed(messageID: Int(messageID), results: results))
        }
    }

    private nonisolated static func onUnsubscribe()
        -> @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, OpaquePointer?) -> Void
    {
        { _, userdata, messageID, _ in
            clientCore(userdata)?.events.yield(.unsubscribed(messageID: Int(messageID)))
        }
    }

    private nonisolated static func onLog()
        -> @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void
    {
        { _, userdata, level, text in
            // Only errors are kept (to explain a failed attempt); this runs for every debug line too.
            guard level & MOSQ_LOG_ERR != 0, let text, let core = clientCore(userdata) else { return }
            let line = String(cString: text)
            core.lastLibraryError.withLock { $0 = line }
        }
    }
}

/// The ``MQTTClientCore`` behind a callback's `void *userdata` (a free function: C callbacks cannot capture).
private func clientCore(_ userdata: UnsafeMutableRawPointer?) -> MQTTClientCore? {
    userdata.map { Unmanaged<MQTTClientCore>.fromOpaque($0).takeUnretainedValue() }
}
