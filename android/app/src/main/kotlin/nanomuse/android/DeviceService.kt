package nanomuse.android

import android.app.Notification
import android.app.NotificationChannel
import android.app.NotificationManager
import android.app.PendingIntent
import android.app.Service
import android.content.Intent
import android.content.pm.ServiceInfo
import android.os.Binder
import android.os.Build
import android.os.Handler
import android.os.IBinder
import android.os.Looper
import android.util.Log
import nanomuse.android.browser.DeviceBrowser
import nanomuse.android.net.OkHttpSocketFactory
import nanomuse.device.protocol.DeviceClient
import nanomuse.device.protocol.Message

/**
 * Keeps the phone lending its browser while the app is in the background: a foreground
 * service (a Presentation window does not make the app foreground) owning the one
 * [DeviceBrowser] and the [DeviceClient]. Type dataSync, limited to 6 h a day on targetSdk 35
 * ([onTimeout] stops it); vendors' battery managers may still pause it, which no app can fix.
 *
 * The Activity binds to it to show the take-over sheet ([Ui]); with no Activity on screen, a
 * hold the server opens becomes a "Your turn" notification that opens it.
 */
class DeviceService : Service() {
    inner class LocalBinder : Binder() {
        val service: DeviceService get() = this@DeviceService
    }

    /** The Activity, while it is bound and started. Calls come on the main thread. */
    interface Ui {
        fun onStatus(text: String)
        fun onUserControl(userControl: Boolean, reason: String?)
    }

    private val binder = LocalBinder()
    private val main = Handler(Looper.getMainLooper())
    private var client: DeviceClient? = null
    private var destroyed = false

    lateinit var browser: DeviceBrowser
        private set
    var ui: Ui? = null
    var statusText = "not connected"
        private set
    var userControl = false
        private set
    var controlReason: String? = null
        private set

    override fun onCreate() {
        super.onCreate()
        val notes = getSystemService(NotificationManager::class.java)
        notes.createNotificationChannel(NotificationChannel(CHANNEL_STATUS, "Lending the browser", NotificationManager.IMPORTANCE_LOW))
        notes.createNotificationChannel(NotificationChannel(CHANNEL_TURN, "Your turn", NotificationManager.IMPORTANCE_HIGH))
        browser = DeviceBrowser(this)
        val notification = status("Starting")
        if (Build.VERSION.SDK_INT >= 29) {
            startForeground(NOTE_STATUS, notification, ServiceInfo.FOREGROUND_SERVICE_TYPE_DATA_SYNC)
        } else {
            startForeground(NOTE_STATUS, notification)
        }
    }

    override fun onStartCommand(intent: Intent?, flags: Int, startId: Int): Int {
        if (intent?.action == ACTION_STOP) {
            stopSelf()
            return START_NOT_STICKY
        }
        if (client == null) connect()
        return START_STICKY
    }

    override fun onBind(intent: Intent): IBinder = binder

    private fun connect() {
        val settings = Settings(this)
        if (!settings.complete) {
            showStatus("Set the gateway's address (wss://…/device) and the device token first")
            stopSelf()
            return
        }
        val config = DeviceClient.Config(url = settings.gatewayUrl, deviceId = settings.deviceId, token = settings.token)
        client = DeviceClient(config, browser, OkHttpSocketFactory(), Events()).also { it.start() }
    }

    /** The user opened the sheet themselves. */
    fun takeOver(reason: String? = null) {
        val client = client
        if (client != null) client.takeOver(reason) else setUserControl(true, reason)
    }

    /** Done in the sheet. */
    fun handBack() {
        val client = client
        if (client != null) client.handBack() else setUserControl(false, null)
    }

    private inner class Events : DeviceClient.Listener {
        override fun onStatus(status: DeviceClient.Status, detail: String) {
            val text = when (status) {
                DeviceClient.Status.CONNECTED -> "Lending the browser to the server"
                DeviceClient.Status.REPLACED -> "Another connection of this phone took over; stopped"
                DeviceClient.Status.WAITING_TO_RETRY -> "Not connected: $detail"
                DeviceClient.Status.STOPPED -> "Stopped"
                else -> "Connecting…"
            }
            main.post { showStatus(text) }
        }

        override fun onUserControl(userControl: Boolean, reason: String?) {
            main.post { setUserControl(userControl, reason) }
        }

        override fun onHold(hold: Message.Hold) {
            Log.i(TAG, "hold ${hold.state} ${hold.holdId}")
        }

        override fun onGatewayError(error: String) {
            Log.w(TAG, "the gateway says: $error")
        }

        override fun onProtocolError(problem: String) {
            Log.w(TAG, problem)
        }
    }

    private fun setUserControl(value: Boolean, reason: String?) {
        if (destroyed) return
        userControl = value
        controlReason = reason
        val ui = ui
        if (ui != null) ui.onUserControl(value, reason)
        val notes = getSystemService(NotificationManager::class.java)
        if (value && ui == null) {
            notes.notify(
                NOTE_TURN,
                Notification.Builder(this, CHANNEL_TURN)
                    .setSmallIcon(android.R.drawable.ic_dialog_info)
                    .setContentTitle(if (reason.isNullOrBlank()) "Your turn" else "Your turn — $reason")
                    .setContentText("Open the page to carry on, then tap Done")
                    .setContentIntent(openApp())
                    .setAutoCancel(true)
                    .build(),
            )
        } else if (!value) {
            notes.cancel(NOTE_TURN)
        }
    }

    private fun showStatus(text: String) {
        if (destroyed) return
        statusText = text
        getSystemService(NotificationManager::class.java).notify(NOTE_STATUS, status(text))
        ui?.onStatus(text)
    }

    private fun status(text: String): Notification =
        Notification.Builder(this, CHANNEL_STATUS)
            .setSmallIcon(android.R.drawable.stat_sys_upload_done)
            .setContentTitle("nanoMuse")
            .setContentText(text)
            .setContentIntent(openApp())
            .setOngoing(true)
            .build()

    private fun openApp(): PendingIntent = PendingIntent.getActivity(
        this, 0,
        Intent(this, MainActivity::class.java).addFlags(Intent.FLAG_ACTIVITY_SINGLE_TOP),
        PendingIntent.FLAG_IMMUTABLE or PendingIntent.FLAG_UPDATE_CURRENT,
    )

    /** Android 15: a dataSync service's daily time is up. */
    override fun onTimeout(startId: Int, fgsType: Int) {
        showStatus("Android's daily limit for background work is reached; open the app to lend the browser again")
        stopSelf()
    }

    override fun onDestroy() {
        destroyed = true
        client?.stop()
        client = null
        browser.release()
        getSystemService(NotificationManager::class.java).cancel(NOTE_TURN)
        super.onDestroy()
    }

    companion object {
        const val ACTION_STOP = "nanomuse.android.STOP"
        private const val TAG = "nanomuse.service"
        private const val CHANNEL_STATUS = "status"
        private const val CHANNEL_TURN = "turn"
        private const val NOTE_STATUS = 1
        private const val NOTE_TURN = 2
    }
}
