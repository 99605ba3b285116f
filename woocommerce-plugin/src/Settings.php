<?php
/**
 * The gateway's settings as the rest of the plugin reads them.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce;

defined( 'ABSPATH' ) || defined( 'SERVICEPAY_TESTING' ) || exit;

/**
 * Reads `woocommerce_servicepay_settings` (the option WooCommerce keeps a gateway's form in, so a shop can
 * script it with `wp option update`) and answers the questions the plugin asks of it.
 */
final class Settings {

	public const OPTION = 'woocommerce_servicepay_settings';

	public const DEFAULTS = array(
		'enabled'         => 'no',
		'title'           => '',
		'description'     => '',
		'testmode'        => 'yes',
		'test_secret_key' => '',
		'live_secret_key' => '',
		'api_url'         => 'http://127.0.0.1:4242',
		'test_widget_url' => 'http://127.0.0.1:4243',
		'live_widget_url' => 'http://127.0.0.1:4244',
	);

	/**
	 * The stored values over the defaults.
	 *
	 * @var array<string,string>
	 */
	private array $values;

	/**
	 * Builds from explicit values (tests) or the stored option.
	 *
	 * @param array<string,mixed>|null $values Values; null reads the option.
	 */
	public function __construct( ?array $values = null ) {
		$stored       = $values ?? get_option( self::OPTION, array() );
		$this->values = array_merge( self::DEFAULTS, is_array( $stored ) ? array_map( 'strval', array_filter( $stored, 'is_scalar' ) ) : array() );
	}

	/** The stored settings. */
	public static function load(): self {
		return new self();
	}

	/**
	 * One value.
	 *
	 * @param string $key Setting name.
	 */
	public function get( string $key ): string {
		return $this->values[ $key ] ?? '';
	}

	/** `test` or `live`: which key the checkout uses. */
	public function environment(): string {
		return 'no' === $this->get( 'testmode' ) ? 'live' : 'test';
	}

	/** The secret key of the active environment ('' when none is saved). */
	public function secret_key(): string {
		return $this->get( $this->environment() . '_secret_key' );
	}

	/** The service's API base URL, without a trailing slash. */
	public function api_url(): string {
		return self::without_trailing_slash( $this->get( 'api_url' ) );
	}

	/**
	 * Where `widget.js` is served for an environment: the host that matches the key (a test client secret on
	 * the live host ends in an error in the widget).
	 *
	 * @param string|null $environment `test`, `live`, or null for the active one.
	 */
	public function widget_script_url( ?string $environment = null ): string {
		$environment = $environment ?? $this->environment();
		return self::without_trailing_slash( $this->get( $environment . '_widget_url' ) ) . '/latest/widget.js';
	}

	/** Whether the gateway is switched on and has a key for its environment. */
	public function is_ready(): bool {
		return 'yes' === $this->get( 'enabled' ) && '' !== $this->secret_key();
	}

	/**
	 * A URL without its trailing slashes (WordPress's untrailingslashit(), which unit tests run without).
	 *
	 * @param string $url URL.
	 */
	private static function without_trailing_slash( string $url ): string {
		return rtrim( $url, '/\\' );
	}
}
