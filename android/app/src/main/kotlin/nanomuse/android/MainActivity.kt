package nanomuse.android

import android.Manifest
import android.app.Activity
import android.content.ComponentName
import android.content.Intent
import android.content.ServiceConnection
import android.content.pm.PackageManager
import android.graphics.Color
import android.os.Build
import android.os.Bundle
import android.os.IBinder
import android.text.InputType
import android.util.TypedValue
import android.view.ViewGroup
import android.widget.Button
import android.widget.EditText
import android.widget.FrameLayout
import android.widget.LinearLayout
import android.widget.ScrollView
import android.widget.TextView
import nanomuse.android.browser.TakeOverSheet

/**
 * The app's one screen: where the gateway is, the device token, lending on or off, the status,
 * and "Take over the page". The take-over sheet lies on top of it while the user has the page —
 * and only while this Activity is started: when it stops, the page goes back offscreen (an
 * invisible window would throttle it) and comes back up when it starts again.
 */
class MainActivity : Activity(), DeviceService.Ui {
    private lateinit var root: FrameLayout
    private lateinit var url: EditText
    private lateinit var token: EditText
    private lateinit var lend: Button
    private lateinit var status: TextView
    private lateinit var takeOver: Button
    private var service: DeviceService? = null
    private var sheet: TakeOverSheet? = null
    private var started = false
    private var bound = false

    private val connection = object : ServiceConnection {
        override fun onServiceConnected(name: ComponentName, binder: IBinder) {
            val service = (binder as DeviceService.LocalBinder).service
            this@MainActivity.service = service
            val sheet = sheet ?: TakeOverSheet(this@MainActivity, service.browser) { service.handBack() }.also {
                sheet = it
                root.addView(it.view, FrameLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.MATCH_PARENT))
            }
            service.ui = this@MainActivity
            onStatus(service.statusText)
            if (started && service.userControl) sheet.show(service.controlReason)
            refresh()
        }

        override fun onServiceDisconnected(name: ComponentName) {
            sheet?.hide()
            service = null
            refresh()
        }
    }

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        val settings = Settings(this)
        url = EditText(this).apply {
            hint = "wss://your-server/device"
            inputType = InputType.TYPE_CLASS_TEXT or InputType.TYPE_TEXT_VARIATION_URI
            setText(settings.gatewayUrl)
        }
        token = EditText(this).apply {
            hint = "device token"
            inputType = InputType.TYPE_CLASS_TEXT or InputType.TYPE_TEXT_VARIATION_PASSWORD
            setText(settings.token)
        }
        lend = Button(this).apply { setOnClickListener { toggle() } }
        status = TextView(this)
        takeOver = Button(this).apply {
            text = "Take over the page"
            setOnClickListener { service?.takeOver() }
        }
        val form = LinearLayout(this).apply {
            orientation = LinearLayout.VERTICAL
            setPadding(dp(20), dp(24), dp(20), dp(24))
            addView(text("nanoMuse", 22f))
            addView(text("Lend this phone's browser to your nanoMuse server. Its pages open here, out of sight; take one over to sign in yourself, then tap Done.", 14f))
            addView(text("Gateway", 13f))
            addView(url)
            addView(text("Device token", 13f))
            addView(token)
            addView(text("This phone: ${settings.deviceId}", 13f))
            addView(lend)
            addView(status)
            addView(takeOver)
            addView(
                text(
                    "Not possible in this browser: Google sign-in (Google refuses it inside apps), " +
                        "QR-code logins meant for this same phone, and passkeys made in Chrome.",
                    12f,
                ),
            )
        }
        root = FrameLayout(this).apply {
            setBackgroundColor(Color.WHITE)
            addView(ScrollView(this@MainActivity).apply { addView(form) })
        }
        setContentView(root)
        refresh()
    }

    override fun onStart() {
        super.onStart()
        started = true
        // Flags 0: bound only while the service runs (started by "Lend"), not created by binding.
        bound = bindService(Intent(this, DeviceService::class.java), connection, 0)
    }

    override fun onStop() {
        started = false
        sheet?.hide() // back offscreen; the user still has the page: it comes back on start
        service?.ui = null
        service = null
        if (bound) unbindService(connection)
        bound = false
        super.onStop()
    }

    override fun onDestroy() {
        sheet?.hide()
        super.onDestroy()
    }

    @Deprecated("Deprecated in Java")
    override fun onBackPressed() {
        if (sheet?.back() == true) return
        if (sheet?.shown == true) return // leave the sheet with Done
        @Suppress("DEPRECATION")
        super.onBackPressed()
    }

    override fun onStatus(text: String) {
        status.text = text
        refresh()
    }

    override fun onUserControl(userControl: Boolean, reason: String?) {
        if (userControl && started) sheet?.show(reason) else sheet?.hide()
    }

    private fun toggle() {
        if (service != null) {
            stopService(Intent(this, DeviceService::class.java))
            sheet?.hide()
            status.text = "Stopped"
            service = null
            refresh()
            return
        }
        val settings = Settings(this)
        settings.gatewayUrl = url.text.toString()
        settings.token = token.text.toString()
        if (!settings.complete) {
            status.text = "The gateway's address starts with wss:// (or ws://), and the token is needed"
            return
        }
        if (Build.VERSION.SDK_INT >= 33 && checkSelfPermission(Manifest.permission.POST_NOTIFICATIONS) != PackageManager.PERMISSION_GRANTED) {
            requestPermissions(arrayOf(Manifest.permission.POST_NOTIFICATIONS), 1)
        }
        // The binding made in onStart connects once the service is up.
        startForegroundService(Intent(this, DeviceService::class.java))
    }

    private fun refresh() {
        lend.text = if (service != null) "Stop lending" else "Lend my browser"
        takeOver.isEnabled = service != null
    }

    private fun text(value: String, sp: Float) = TextView(this).apply {
        text = value
        setTextSize(TypedValue.COMPLEX_UNIT_SP, sp)
        setPadding(0, dp(8), 0, dp(4))
    }

    private fun dp(value: Int): Int =
        TypedValue.applyDimension(TypedValue.COMPLEX_UNIT_DIP, value.toFloat(), resources.displayMetrics).toInt()
}
