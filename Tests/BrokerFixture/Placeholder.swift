enum BrokerFixturePlaceholder {}
