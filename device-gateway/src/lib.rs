//! The device gateway: phones that lend their WebView (filled in by the device-gateway issue).
