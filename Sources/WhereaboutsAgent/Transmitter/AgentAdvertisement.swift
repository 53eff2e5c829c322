public import WhereaboutsAdvertising
public import WhereaboutsCore
public import WhereaboutsWire

/// What an agent transmits as an iBeacon, so that boards can hear each other (for calibration and health).
///
/// By default an agent advertises its ``WhereaboutsCore/AgentBeacon`` identity: the site UUID, its floor as the
/// major, and a minor hashed from its id, which the locator recomputes from the map. Two ids can share a minor
/// (there are only 65,536); give one of them `--advertise` explicitly.
public enum AgentAdvertisement {
    /// The default advertisement: the agent's beacon identity, −59 dBm at 1 m.
    public static func advertisement(site: BeaconUUID, floor: UInt16, agent: AgentID, measuredPower: Int8 = -59)
        -> IBeaconAdvertisement
    {
        IBeaconAdvertisement(
            uuid: site, major: floor, minor: AgentBeacon.minor(forAgentID: agent.rawValue), measuredPower: measuredPower
        )
    }

    /// Parses `UUID:MAJOR:MINOR[:POWER]`; power in dBm, −127…20, default −59.
    public static func parse(_ text: String) -> IBeaconAdvertisement? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (3...4).contains(parts.count), let uuid = BeaconUUID(String(parts[0])),
            let major = UInt16(parts[1]), let minor = UInt16(parts[2])
        else { return nil }
        var power: Int8 = -59
        if parts.count == 4 {
            guard let value = Int8(parts[3]), value <= 20 else { return nil }
            power = value
        }
        return IBeaconAdvertisement(uuid: uuid, major: major, minor: minor, measuredPower: power)
    }
}
