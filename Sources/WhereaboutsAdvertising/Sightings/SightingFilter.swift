public import WhereaboutsCore

/// Which sightings are published: beacons under the identity constraints or named one by one, devices at
/// configured addresses, and only above an RSSI floor.
public struct SightingFilter: Sendable, Hashable {
    /// iBeacons and AltBeacons matching any of these are published (UUID, UUID+major or UUID+major+minor).
    public var constraints: [BeaconIdentityConstraint]
    /// Tags published whatever the constraints say; how Eddystone tags, which carry no UUID, are selected.
    public var namedTags: Set<TagIdentity>
    /// Devices tracked by address, when their advert names no selected beacon. Only stable addresses (public or
    /// random static) are matched.
    public var addresses: Set<DeviceAddress>
    /// Reports weaker than this (dBm) are dropped; nil keeps all.
    public var minimumRSSI: Int?
    /// Publish every beacon, whatever its identity; for surveys and debugging.
    public var selectsAllBeacons: Bool

    /// Makes a filter from its parts.
    public init(
        constraints: [BeaconIdentityConstraint],
        namedTags: Set<TagIdentity> = [],
        addresses: Set<DeviceAddress> = [],
        minimumRSSI: Int? = nil,
        selectsAllBeacons: Bool = false
    ) {
        self.constraints = constraints
        self.namedTags = namedTags
        self.addresses = addresses
        self.minimumRSSI = minimumRSSI
        self.selectsAllBeacons = selectsAllBeacons
    }

    /// The default: every beacon carrying the site's UUID.
    public init(siteUUID: BeaconUUID, minimumRSSI: Int? = nil) {
        self.init(
            constraints: [BeaconIdentityConstraint(uuid: siteUUID)],
            minimumRSSI: minimumRSSI
        )
    }

    /// Whether a beacon's tag is published.
    public func selects(_ tag: TagIdentity) -> Bool {
        selectsAllBeacons || namedTags.contains(tag) || constraints.contains { $0.matches(tag) }
    }

    /// Whether a device is tracked by its address.
    public func tracks(_ address: DeviceAddress, type: AddressType) -> Bool {
        !addresses.isEmpty && type.isStable(address) && addresses.contains(address)
    }

    /// Whether a signal is strong enough.
    public func admits(rssi: Int) -> Bool {
        guard let minimumRSSI else { return true }
        return rssi >= minimumRSSI
    }
}
