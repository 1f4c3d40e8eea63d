package nanomuse.android

import android.content.Context
import java.security.SecureRandom

/** What the user set: the gateway's address and the device token; the device id is made once. */
class Settings(context: Context) {
    private val prefs = context.getSharedPreferences("nanomuse", Context.MODE_PRIVATE)

    /** `wss://<gateway>/device` (ws:// on a local network). */
    var gatewayUrl: String
        get() = prefs.getString("gateway_url", "") ?: ""
        set(value) = prefs.edit().putString("gateway_url", value.trim()).apply()

    var token: String
        get() = prefs.getString("token", "") ?: ""
        set(value) = prefs.edit().putString("token", value.trim()).apply()

    /** Stable for the phone: the gateway's take-over of an older connection goes by it. */
    val deviceId: String
        get() = prefs.getString("device_id", null) ?: synchronized(Settings::class.java) {
            prefs.getString("device_id", null) ?: run {
                val bytes = ByteArray(6).also { SecureRandom().nextBytes(it) }
                val id = "android-" + bytes.joinToString("") { "%02x".format(it) }
                prefs.edit().putString("device_id", id).commit()
                id
            }
        }

    val complete: Boolean
        get() = (gatewayUrl.startsWith("ws://") || gatewayUrl.startsWith("wss://")) && token.isNotEmpty()
}
