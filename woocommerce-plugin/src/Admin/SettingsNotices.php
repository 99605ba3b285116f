<?php
/**
 * The settings page's own notices.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Admin;

defined( 'ABSPATH' ) || exit;

/**
 * What saving the ServicePay settings did, said on the page that follows. WooCommerce's own list
 * (`WC_Admin_Settings::add_error`) hides every message once one error is in it, "Your settings have been saved."
 * included, so a refused key made a saved form look unsaved. The plugin therefore keeps its notices here and
 * prints them at the top of its form (`Gateway::admin_options`), under WooCommerce's own message: each says
 * what was kept, what was refused and why.
 */
final class SettingsNotices {

	/**
	 * The notices of this request, in order.
	 *
	 * @var array<int,array{kind:string,text:string}>
	 */
	private static array $notices = array();

	/**
	 * Something went wrong: a value was refused, or the service cannot be reached.
	 *
	 * @param string $text Plain text.
	 */
	public static function error( string $text ): void {
		self::$notices[] = array(
			'kind' => 'error',
			'text' => $text,
		);
	}

	/**
	 * Worth knowing, not wrong: a key saved that works only after approval, a currency not taken.
	 *
	 * @param string $text Plain text.
	 */
	public static function warning( string $text ): void {
		self::$notices[] = array(
			'kind' => 'warning',
			'text' => $text,
		);
	}

	/**
	 * Something done: the webhook endpoint registered.
	 *
	 * @param string $text Plain text.
	 */
	public static function success( string $text ): void {
		self::$notices[] = array(
			'kind' => 'success',
			'text' => $text,
		);
	}

	/**
	 * The notices so far (for tests).
	 *
	 * @return array<int,array{kind:string,text:string}>
	 */
	public static function all(): array {
		return self::$notices;
	}

	/** Prints the notices, errors first, as WordPress's inline admin notices, and forgets them. */
	public static function render(): void {
		$order = array(
			'error'   => 0,
			'warning' => 1,
			'success' => 2,
		);
		$notices = self::$notices;
		usort( $notices, static fn ( $a, $b ) => $order[ $a['kind'] ] <=> $order[ $b['kind'] ] );
		foreach ( $notices as $notice ) {
			printf(
				'<div class="notice notice-%1$s inline servicepay-notice"%2$s><p>%3$s</p></div>',
				esc_attr( $notice['kind'] ),
				'error' === $notice['kind'] ? ' role="alert"' : '',
				esc_html( $notice['text'] )
			);
		}
		self::$notices = array();
	}
}
